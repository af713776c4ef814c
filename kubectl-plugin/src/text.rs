//! What the commands print: tables, JSON and times, one way for every command.

use std::fmt::Write as _;

use serde::Serialize;
use time::OffsetDateTime;

/// `2027-12-01T04:05:06Z`: RFC 3339 in UTC, to the second.
pub fn rfc3339(at: OffsetDateTime) -> String {
    at.to_offset(time::UtcOffset::UTC)
        .replace_nanosecond(0)
        .unwrap_or(at)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| at.unix_timestamp().to_string())
}

/// Rows of cells as left-aligned columns, two spaces apart.
pub fn columns<const N: usize>(lines: &[[String; N]]) -> String {
    let mut widths = [0; N];
    for line in lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut printed = String::new();
    for line in lines {
        let mut text = String::new();
        for (index, (cell, width)) in line.iter().zip(widths).enumerate() {
            if index + 1 == N {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:width$}  ");
            }
        }
        printed.push_str(text.trim_end());
        printed.push('\n');
    }
    printed
}

/// `value` as pretty JSON, with a final newline.
pub fn json<T: Serialize>(value: &T) -> String {
    let mut printed = serde_json::to_string_pretty(value).unwrap_or_default();
    printed.push('\n');
    printed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_trim() {
        let lines = [
            ["A".to_owned(), "BB".to_owned(), "C".to_owned()],
            ["aaa".to_owned(), String::new(), String::new()],
        ];
        assert_eq!(columns(&lines), "A    BB  C\naaa\n");
    }

    #[test]
    fn times_are_utc_seconds() {
        let at = OffsetDateTime::from_unix_timestamp(1_796_097_906).unwrap();
        assert_eq!(rfc3339(at), "2026-12-01T04:05:06Z");
    }
}
