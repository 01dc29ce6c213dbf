//! Bit maps: a set of small integers tested with one shift and mask.

/// Skipped when cutting features: Thai vowel signs above/below and tone
/// marks (U+0E31, U+0E34..=U+0E3A, U+0E47..=U+0E4E).
pub(crate) fn is_thai_mark(c: u32) -> bool {
    // One bit per character from U+0E31 on.
    let d = c.wrapping_sub(0x0E31);
    d < 30 && (0x3FC0_03F9u32 >> d) & 1 != 0
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
    }
}
