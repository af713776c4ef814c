//! Java properties files (`cruisecontrol.properties`): comments, continuation lines, the
//! `=`, `:` and white-space separators and backslash escapes. Later keys win.

use std::collections::BTreeMap;

/// Parses `text` into key/value pairs; a key given twice keeps its last value.
pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut entries = BTreeMap::new();
    let mut logical = String::new();
    for line in text.lines() {
        let line = line.trim_start_matches([' ', '\t', '\u{c}']);
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        if ends_with_continuation(line) {
            logical.push_str(&line[..line.len() - 1]);
            continue;
        }
        logical.push_str(line);
        let (key, value) = split(&logical);
        entries.insert(key, value);
        logical.clear();
    }
    if !logical.is_empty() {
        let (key, value) = split(&logical);
        entries.insert(key, value);
    }
    entries
}

/// Whether the line ends in an odd number of backslashes.
fn ends_with_continuation(line: &str) -> bool {
    line.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
}

/// Splits a logical line into its unescaped key and value.
fn split(line: &str) -> (String, String) {
    let mut escaped = false;
    let mut key_end = line.len();
    let mut value_start = line.len();
    for (index, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' => {
                key_end = index;
                value_start = index + 1;
                break;
            }
            ' ' | '\t' | '\u{c}' => {
                key_end = index;
                let rest = line[index..].trim_start_matches([' ', '\t', '\u{c}']);
                value_start = line.len() - rest.len();
                if rest.starts_with(['=', ':']) {
                    value_start += 1;
                }
                break;
            }
            _ => {}
        }
    }
    let value = line[value_start..].trim_start_matches([' ', '\t', '\u{c}']);
    (unescape(&line[..key_end]), unescape(value))
}

/// Resolves `\t`, `\n`, `\r`, `\f`, `\uXXXX` and `\<c>` (= `c`).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) => out.push(decoded),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_separators_comments_continuations_and_escapes() {
        let text = "# comment\n! also\na=1\nb : 2\nc 3\n  d=x\\\n    y\ne\\:f=g\\nh\nempty=\nonly\na=last\n";
        let entries = parse(text);
        assert_eq!(entries.get("a").map(String::as_str), Some("last"));
        assert_eq!(entries.get("b").map(String::as_str), Some("2"));
        assert_eq!(entries.get("c").map(String::as_str), Some("3"));
        assert_eq!(entries.get("d").map(String::as_str), Some("xy"));
        assert_eq!(entries.get("e:f").map(String::as_str), Some("g\nh"));
        assert_eq!(entries.get("empty").map(String::as_str), Some(""));
        assert_eq!(entries.get("only").map(String::as_str), Some(""));
        assert_eq!(entries.len(), 7);
    }
}
