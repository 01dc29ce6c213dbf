//! UTF-8 helpers: every cut the core makes lands on a character boundary.

/// The longest prefix of `s` that is at most `max` bytes and ends on a
/// character boundary. `s` must be valid UTF-8.
pub fn floor_char_boundary(s: &[u8], max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut end = max;
    // A continuation byte is 0b10xx_xxxx: step back over at most three.
    while end > 0 && s.get(end).is_some_and(|b| b & 0xC0 == 0x80) {
        end -= 1;
    }
    end
}

/// Copies `src` into the start of `dst`, as much as fits. Unlike
/// `copy_from_slice` it has no length check that could panic.
pub fn copy_prefix(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}

/// Validates `s` and returns how many of its bytes to keep so that the kept
/// part is at most `max` bytes of whole characters; `None` when `s` is not
/// UTF-8.
pub fn utf8_prefix(s: &[u8], max: usize) -> Option<usize> {
    if core::str::from_utf8(s).is_err() {
        return None;
    }
    Some(floor_char_boundary(s, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_thai_on_character_boundaries() {
        let s = "สวัสดี".as_bytes(); // 6 characters of 3 bytes
        for max in 0..=s.len() {
            let n = floor_char_boundary(s, max);
            assert!(n <= max);
            assert_eq!(n, max / 3 * 3);
            assert!(core::str::from_utf8(&s[..n]).is_ok());
        }
    }

    #[test]
    fn rejects_invalid_utf8() {
        assert_eq!(utf8_prefix(b"ok", 10), Some(2));
        assert_eq!(utf8_prefix(&[0xE0, 0x80], 10), None);
        assert_eq!(utf8_prefix(&[0xFF], 10), None);
    }
}
