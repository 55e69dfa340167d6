//! Text fit for error messages: a program's output cut to its two ends, so that a chatty
//! tool cannot fill the store (engines and the PostgreSQL cluster quote what failed).

/// Bytes of a program's output an error message keeps from each end (see [`bounded_output`]).
pub const OUTPUT_KEEP_BYTES: usize = 400;

/// A program's output fit for an error message, which the store keeps and `show` prints:
/// whole when it is short, else its first and last [`OUTPUT_KEEP_BYTES`] bytes (cut on char
/// boundaries) around "… N bytes omitted …".
pub fn bounded_output(text: &str) -> String {
    if text.len() <= 2 * OUTPUT_KEEP_BYTES + 64 {
        return text.to_string();
    }
    let mut head = OUTPUT_KEEP_BYTES;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - OUTPUT_KEEP_BYTES;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} … {} bytes omitted … {}", &text[..head], tail - head, &text[tail..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        assert_eq!(bounded_output(""), "");
        let text = "x".repeat(2 * OUTPUT_KEEP_BYTES + 64);
        assert_eq!(bounded_output(&text), text);
    }

    #[test]
    fn long_output_keeps_both_ends_and_counts_the_rest() {
        let text = format!("first line\n{}\nscore: none", "y".repeat(30_000));
        let got = bounded_output(&text);
        assert!(got.starts_with("first line\nyyy") && got.ends_with("yyy\nscore: none"), "{got}");
        let omitted = text.len() - 2 * OUTPUT_KEEP_BYTES;
        assert!(got.contains(&format!(" … {omitted} bytes omitted … ")), "{got}");
        assert!(got.len() < 2 * OUTPUT_KEEP_BYTES + 64, "{}", got.len());
    }

    #[test]
    fn cuts_fall_on_char_boundaries() {
        // 'é' is two bytes: with an odd lead-in, both cut points land inside a char.
        for lead in 0..3 {
            let text = format!("{}{}", "a".repeat(lead), "é".repeat(2_000));
            let got = bounded_output(&text);
            let (head, rest) = got.split_once(" … ").expect("marker");
            let (count, tail) = rest.split_once(" bytes omitted … ").expect("marker");
            let omitted: usize = count.parse().expect("count");
            assert_eq!(head.len() + omitted + tail.len(), text.len(), "lead {lead}");
            assert!(head.len() <= OUTPUT_KEEP_BYTES && tail.len() <= OUTPUT_KEEP_BYTES);
        }
    }
}
