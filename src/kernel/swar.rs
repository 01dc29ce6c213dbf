//! Word-at-a-time (SWAR) byte tests: a machine word of bytes tested at
//! once, each byte's answer in its top bit.

/// A machine word's bytes.
pub(crate) const W: usize = core::mem::size_of::<usize>();

// The JSON-line parser's (`format::lines`).

/// The length of the run of plain string bytes (not `"`, `\\`, nor below
/// 0x20) at the start of `s`, and whether they are all ASCII: a machine
/// word a step while none is special.
pub(crate) fn plain_len(s: &[u8]) -> (usize, bool) {
    plain_len_in(s)
}

/// [`plain_len`] inlined: in a string's decode, once a chunk.
#[inline(always)]
pub(crate) fn plain_len_in(s: &[u8]) -> (usize, bool) {
    const LO: usize = usize::MAX / 0xFF;
    const HI: usize = LO << 7;
    let mut i = 0usize;
    let mut seen = 0usize;
    while let Some(w) = s.get(i..i + W).and_then(|w| <[u8; W]>::try_from(w).ok()) {
        let v = usize::from_le_bytes(w);
        let special = specials(v);
        if special != 0 {
            // The bytes below the first special one.
            let bits = special.trailing_zeros() & !7;
            let below = (1usize << bits).wrapping_sub(1);
            return (i + bits as usize / 8, (seen | (v & below)) & HI == 0);
        }
        seen |= v;
        i += W;
    }
    while let Some(&c) = s.get(i) {
        if c < 0x20 || c == b'"' || c == b'\\' {
            break;
        }
        seen |= usize::from(c);
        i += 1;
    }
    (i, seen & HI == 0)
}

/// The bytes of the word `v` that end a run of plain string bytes (below
/// 0x20, `"` or `\\`): their high bits (exact up to the first one: a
/// borrow only makes the bytes above it look special).
#[inline(always)]
fn specials(v: usize) -> usize {
    const LO: usize = usize::MAX / 0xFF;
    let (q, b) = (v ^ (0x22 * LO), v ^ (0x5C * LO));
    ((v.wrapping_sub(0x20 * LO) & !v) | (q.wrapping_sub(LO) & !q) | (b.wrapping_sub(LO) & !b))
        & (LO << 7)
}

/// A field name that is a run of plain ASCII bytes and its closing quote
/// within the first word of `s` (after the opening quote): its length and
/// that word (the name's bytes are its first ones, as the parser's `decode_string`
/// would give them: without a pass of its loop and a copy); `None` for any
/// other (it decodes them).
#[inline(always)]
pub(crate) fn quick_name(s: &[u8]) -> Option<(usize, [u8; W])> {
    let w = *s.first_chunk::<W>()?;
    let v = usize::from_le_bytes(w);
    // Its first byte that is special or not ASCII (exact: see `specials`).
    let stop = specials(v) | v & (usize::MAX / 0xFF) << 7;
    let bits = stop.trailing_zeros() & !7;
    if stop == 0 || (v >> bits) as u8 != b'"' {
        return None;
    }
    Some((bits as usize / 8, w))
}

// The context's escapes (`text::escape`).

/// Bytes at the start of `s` that [`crate::text::escape`] copies as they are: up to the
/// first that may start an escape (below 0x20, 0x7F, 0xC2 or 0xE2), a
/// machine word a step. A word holds none when (first the common case,
/// printable ASCII) no byte has bit 7 in `w`, in `w + 1` (0x7F) nor in
/// `w - 0x20` (below 0x20), no carry crossing a byte; else exactly: no
/// byte below 0x20, no zero byte in `w ^ 0x7F…` nor in
/// `(w | 0x20…) ^ 0xE2…` (0xC2 and 0xE2).
pub(crate) fn plain_run(s: &[u8]) -> usize {
    const L: usize = usize::MAX / 0xFF;
    const H: usize = L << 7;
    let mut i = 0usize;
    while let Some(w) = s.get(i..i + W).and_then(|w| <[u8; W]>::try_from(w).ok()) {
        let w = usize::from_le_bytes(w);
        let low = w.wrapping_sub(L * 0x20);
        if (w | w.wrapping_add(L) | low) & H != 0 {
            let del = w ^ (L * 0x7F);
            let lead = (w | (L * 0x20)) ^ (L * 0xE2);
            if ((low & !w) | (del.wrapping_sub(L) & !del) | (lead.wrapping_sub(L) & !lead)) & H != 0
            {
                break;
            }
        }
        i += W;
    }
    while let Some(&b) = s.get(i) {
        if b < 0x20 || b == 0x7F || b | 0x20 == 0xE2 {
            break;
        }
        i += 1;
    }
    i
}

// Recall's tokens (`recall`).

/// A byte repeated in each byte of a word.
#[cfg(feature = "recall")]
const fn bytes(b: u8) -> usize {
    usize::MAX / 0xFF * b as usize
}

/// The top bit of each byte of `w` that is not an ASCII letter or digit,
/// or follows one that is not (past the first, the bytes do not matter:
/// the sums may carry into them).
#[cfg(feature = "recall")]
#[inline(always)]
pub(crate) fn not_token(w: usize) -> usize {
    // Per byte, in its top bit: `b >= lo` and `b > hi`, for `b < 0x80`
    // (no carry out of such a byte).
    let ge = |b: usize, lo: u8| b.wrapping_add(bytes(0x80 - lo));
    let gt = |b: usize, hi: u8| b.wrapping_add(bytes(0x7F - hi));
    let l = w | bytes(0x20);
    let letter = ge(l, b'a') & !gt(l, b'z');
    let digit = ge(w, b'0') & !gt(w, b'9');
    !((letter | digit) & !w) & bytes(0x80)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes around the edges the tests look for, more often than at random.
    fn byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            3 => 0x20u8..0x7F,
            1 => any::<u8>(),
            2 => prop::sample::select(vec![
                0x00, 0x1F, b' ', b'"', b'\\', 0x7F, 0x80, 0x9F, 0xC2, 0xC3, 0xE2, 0xE3, 0x42,
                0x62, b'/', b'0', b'9', b':', b'@', b'A', b'Z', b'[', b'`', b'a', b'z', b'{',
            ]),
        ]
    }

    fn bytes_of(max: usize) -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(byte(), 0..max)
    }

    fn word() -> impl Strategy<Value = [u8; W]> {
        prop::collection::vec(byte(), W).prop_map(|v| <[u8; W]>::try_from(v).unwrap())
    }

    /// A byte that ends a run of plain string bytes.
    fn special(c: u8) -> bool {
        c < 0x20 || c == b'"' || c == b'\\'
    }

    /// The index of the first byte whose top bit is set in `v`.
    fn first_set(v: usize) -> Option<usize> {
        (v != 0).then(|| v.trailing_zeros() as usize / 8)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            ..crate::testing::regressions("tests/proptest-regressions/kernel.txt")
        })]

        #[test]
        fn plain_len_is_the_plain_run(s in bytes_of(40)) {
            let n = s.iter().position(|&c| special(c)).unwrap_or(s.len());
            let ascii = s[..n].iter().all(|&c| c < 0x80);
            prop_assert_eq!(plain_len(&s), (n, ascii));
            prop_assert_eq!(plain_len_in(&s), (n, ascii));
        }

        #[test]
        fn specials_finds_the_first_special_byte(w in word()) {
            let v = usize::from_le_bytes(w);
            prop_assert_eq!(first_set(specials(v)), w.iter().position(|&c| special(c)));
        }

        #[test]
        fn quick_name_is_a_plain_ascii_name_and_its_quote(s in bytes_of(2 * W)) {
            let want = s.first_chunk::<W>().and_then(|w| {
                let k = w.iter().position(|&c| special(c) || c >= 0x80)?;
                (w[k] == b'"').then_some((k, *w))
            });
            prop_assert_eq!(quick_name(&s), want);
        }

        #[test]
        fn plain_run_stops_where_an_escape_may_start(s in bytes_of(40)) {
            let n = s
                .iter()
                .position(|&b| b < 0x20 || b == 0x7F || b | 0x20 == 0xE2)
                .unwrap_or(s.len());
            prop_assert_eq!(plain_run(&s), n);
        }

        #[cfg(feature = "recall")]
        #[test]
        fn not_token_finds_the_first_byte_not_a_letter_or_digit(w in word()) {
            let v = usize::from_le_bytes(w);
            let want = w.iter().position(|c| !c.is_ascii_alphanumeric());
            prop_assert_eq!(first_set(not_token(v)), want);
        }
    }
}
