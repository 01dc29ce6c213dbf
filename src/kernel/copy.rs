//! Byte copies a word at a time, without a `memcpy` call: inline loads and
//! stores, where `copy_from_slice` calls `memcpy`, whose frame (with its
//! callers') would sit at the bottom of every parse's deepest path.

use super::swar::W;

/// Copies `src` to the start of `dst`, as much as fits: a word at a time,
/// then the last bytes. Inlined: the reader's refill copies a chunk with it
/// on the deepest path of every load.
#[inline(always)] // stack: see docs/STACK.md
pub(crate) fn copy_chunk(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    let mut i = 0usize;
    while let (Some(d), Some(s)) = (dst.get_mut(i..i + W), src.get(i..i + W)) {
        if let (Ok(d), Ok(s)) = (<&mut [u8; W]>::try_from(d), <&[u8; W]>::try_from(s)) {
            *d = *s;
        }
        i += W;
    }
    // The last bytes: the word that ends with them (again over bytes
    // already copied), when there is one.
    let end = n.wrapping_sub(W)..n;
    if let (Some(d), Some(s)) = (dst.get_mut(end.clone()), src.get(end)) {
        if let (Ok(d), Ok(s)) = (<&mut [u8; W]>::try_from(d), <&[u8; W]>::try_from(s)) {
            *d = *s;
        }
        return;
    }
    while i < n {
        if let (Some(d), Some(&s)) = (dst.get_mut(i), src.get(i)) {
            *d = s;
        }
        i += 1;
    }
}

/// [`copy_chunk`] in one copy in flash, for a string's bytes (a leaf under
/// the parse) and the bytes the writer buffers.
pub(crate) fn copy_run(dst: &mut [u8], src: &[u8]) {
    copy_chunk(dst, src);
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            ..crate::testing::regressions("tests/proptest-regressions/kernel.txt")
        })]
        /// The same bytes as a byte-by-byte copy, for every pair of
        /// lengths, and nothing past them touched.
        #[test]
        fn copies_as_byte_by_byte(
            src in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            dst_len in 0usize..40,
        ) {
            let mut dst = [0xA5u8; 40];
            let mut want = [0xA5u8; 40];
            let n = dst_len.min(src.len());
            want[..n].copy_from_slice(&src[..n]);
            copy_run(&mut dst[..dst_len], &src);
            proptest::prop_assert_eq!(dst, want);
        }
    }
}
