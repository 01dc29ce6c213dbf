//! Bit maps: a set of small integers tested with one shift and mask, and
//! the 40-line maps the context keeps in 5 bytes.

/// Skipped when cutting features: Thai vowel signs above/below and tone
/// marks (U+0E31, U+0E34..=U+0E3A, U+0E47..=U+0E4E).
pub(crate) fn is_thai_mark(c: u32) -> bool {
    // One bit per character from U+0E31 on.
    let d = c.wrapping_sub(0x0E31);
    d < 30 && (0x3FC0_03F9u32 >> d) & 1 != 0
}

/// A bitmap of the first 40 lines from its 5 bytes.
#[inline(always)]
pub(crate) fn bits(b: [u8; 5]) -> u64 {
    let [b0, b1, b2, b3, b4] = b;
    u64::from_le_bytes([b0, b1, b2, b3, b4, 0, 0, 0])
}

/// The 5 bytes of bitmap `v` (of the first 40 lines).
#[inline(always)]
pub(crate) fn put(v: u64) -> [u8; 5] {
    let [b0, b1, b2, b3, b4, ..] = v.to_le_bytes();
    [b0, b1, b2, b3, b4]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thai_marks_are_the_listed_ones() {
        for c in 0..0x1_0000 {
            let listed = matches!(c, 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E);
            assert_eq!(is_thai_mark(c), listed, "{c:#x}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            ..crate::testing::regressions("tests/proptest-regressions/kernel.txt")
        })]

        /// Every code point, and the wrap-around below U+0E31.
        #[test]
        fn thai_marks_are_the_listed_ones_anywhere(c in proptest::prelude::any::<u32>()) {
            let listed = matches!(c, 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E);
            proptest::prop_assert_eq!(is_thai_mark(c), listed);
        }

        /// Bit `i` of the map is bit `i % 8` of byte `i / 8`, for the
        /// first 40; the bits above are 0 in the map and not kept.
        #[test]
        fn bits_and_put_are_the_bytes_bit_by_bit(
            b in proptest::prelude::any::<[u8; 5]>(),
            v in proptest::prelude::any::<u64>(),
        ) {
            let map = bits(b);
            for i in 0..64 {
                let want = i < 40 && b[i / 8] >> (i % 8) & 1 != 0;
                proptest::prop_assert_eq!(map >> i & 1 != 0, want);
            }
            let bytes = put(v);
            for i in 0..40 {
                proptest::prop_assert_eq!(bytes[i / 8] >> (i % 8) & 1 != 0, v >> i & 1 != 0);
            }
            proptest::prop_assert_eq!(bits(put(v)), v & ((1 << 40) - 1));
            proptest::prop_assert_eq!(put(bits(b)), b);
        }
    }
}
