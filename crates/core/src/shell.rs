//! Words for `/bin/sh`: the one quoting rule of every command line racehorse writes (a
//! variant's plugd and volume commands, fio's run hooks, the words after `racehorse run … --`).

/// `word` in single quotes, each `'` in it written `'\''`: the shell reads it back as exactly
/// `word`, whatever it holds (spaces, `$`, backslashes, newlines, quotes).
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A word the shell takes as it is without quotes: not empty, and only ASCII letters and
/// digits and `-_./=:,+@%{}`. Braces are plain so that `{clients}`-style placeholders stay
/// visible and substitutable in a command line.
pub fn is_plain(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c))
}

/// The words as one command line: a plain word (see [`is_plain`]) as it is, any other
/// [`quote`]d, so that the shell sees exactly these arguments.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| if is_plain(w.as_ref()) { w.as_ref().to_string() } else { quote(w.as_ref()) })
        .collect();
    quoted.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// What `/bin/sh` prints for `printf '[%s]' LINE`: each argument it parsed, bracketed.
    fn sh_args(line: &str) -> String {
        let out = Command::new("sh").arg("-c").arg(format!("printf '[%s]' {line}")).output().unwrap();
        assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn quotes_every_word_and_escapes_single_quotes() {
        assert_eq!(quote("plain"), "'plain'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("/tmp/a b"), "'/tmp/a b'");
    }

    #[test]
    fn join_leaves_plain_words_and_placeholders_bare() {
        let words = ["stress-ng", "--cpu", "{clients}", "-t", "5s", "a b", "", "$HOME", "x'y"];
        assert_eq!(join(&words), r#"stress-ng --cpu {clients} -t 5s 'a b' '' '$HOME' 'x'\''y'"#);
        assert!(is_plain("k=v,w:1+2@3%"));
        for odd in ["", "a b", "$x", "a;b", "`x`", "a*", "~", "a\"b", "é"] {
            assert!(!is_plain(odd), "{odd:?}");
        }
    }

    #[test]
    fn the_shell_reads_back_awkward_words() {
        let words =
            ["", " ", "it's", "'", "''", "\\", "a\nb", "$HOME", "`id`", "\"", "*", "~", "a;b|c&d", "é ü"];
        for w in words {
            assert_eq!(sh_args(&quote(w)), format!("[{w}]"), "{w:?}");
        }
        let all: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let want: String = all.iter().map(|w| format!("[{w}]")).collect();
        assert_eq!(sh_args(&join(&all)), want);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn any_quoted_word_reaches_the_shell_unchanged(word in "[^\u{0}]{0,24}") {
            proptest::prop_assert_eq!(sh_args(&quote(&word)), format!("[{word}]"));
        }

        #[test]
        fn any_joined_words_reach_the_shell_unchanged(words in proptest::collection::vec("[a-z0-9 '\"$\\\\.=_-]{0,8}", 0..5)) {
            let want: String = words.iter().map(|w| format!("[{w}]")).collect();
            let line = join(&words);
            // `printf` with no argument still prints its format once.
            let want = if words.is_empty() { "[]".to_string() } else { want };
            proptest::prop_assert_eq!(sh_args(&line), want, "{}", line);
        }
    }
}
