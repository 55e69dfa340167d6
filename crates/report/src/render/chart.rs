//! What every chart of a document shares: how many bars it shows at most, and the title of
//! one cut to that many.

/// Bar charts show at most this many points; more would be unreadable.
pub const MAX_BARS: usize = 48;

/// `title`, with `(first 48 of 60 points)` when the chart shows fewer points than there are.
pub fn truncated(title: String, shown: usize, total: usize) -> String {
    if total > shown {
        format!("{title} (first {shown} of {total} points)")
    } else {
        title
    }
}
