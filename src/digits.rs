//! Integers as the command line prints them, shared by the messages of `io` and the
//! renderers (a leaf: it uses nothing of the crate).

/// `1234567` as `1,234,567`: how the command line prints large counts.
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn groups_of_three() {
        assert_eq!(super::group_digits(2147483648), "2,147,483,648");
        assert_eq!(super::group_digits(999), "999");
    }
}
