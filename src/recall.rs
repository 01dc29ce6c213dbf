//! Relevant recall: how well a memory pair matches a query, for Thai and
//! English alike, with no vectors and no heap.
//!
//! Text is cut into tokens: runs of letters and digits (ASCII lower-cased;
//! every non-ASCII character counts as a letter, so Thai, which has no
//! spaces, is one long token per phrase). ASCII spaces and punctuation,
//! `_` and `-` separate tokens. Thai vowel and tone marks are skipped, so a
//! spelling that differs only in a mark still matches. The features of a
//! text are the character bigrams inside its tokens (a one-character token
//! is its own feature).
//!
//! A query is the set of its features, hashed into 512 bits (64 bytes):
//! a bigram's key is its two characters side by side (two ASCII ones, the
//! two bytes as they are in the text, lower-cased), multiplied once (the
//! query lives for one build: the hash is free to change). A pair's score
//! is the share of its features found in the query, the key counting
//! twice, scaled to 0..=1000: `1000 × hits / (features + 4)` (the `+ 4`
//! keeps a one-feature pair from scoring a full 1000 on one lucky bigram).

use core::cell::Cell;

use crate::kernel::bits::is_thai_mark;
use crate::kernel::swar::not_token;

/// Bits of the query feature set.
const QUERY_BITS: usize = 512;

/// The hashed feature set of a query.
#[derive(Clone)]
pub struct Query {
    /// (No features: no bit set, and every score 0.) Cells: scoring reads
    /// each word and stores it back unchanged, which keeps one loop body
    /// for scoring and building with no test of which it does.
    bits: Words,
}

/// The words of a query's feature set.
type Words = [Cell<u32>; WORDS];

/// Words of the query feature set.
const WORDS: usize = QUERY_BITS / 32;

/// Set in [`tally`]'s count of features when the text holds a character
/// the context writes as an escape (`crate::text::escape`: below U+0020,
/// U+007F..U+009F, U+2028, U+2029). `tally` reads every byte anyway, so a
/// memory line's length is known without a pass of its own when there is
/// nothing to escape (the common case).
const ESCAPES: u32 = 1 << 31;

/// Counts the features of `text` (UTF-8: the store's pairs and the turns
/// are checked when they come in) and those of them in `bits`: (hits,
/// features). With `add`, also adds each feature to `bits` (scoring, each
/// word is stored back as it was: one loop body for both).
///
/// One loop with no closure call per feature: a run of ASCII letters and
/// digits at once ([`ascii_run`]), any other character on its own. A
/// character either extends the token (a bigram with the previous
/// character) or ends it (a token of one character is its own feature).
fn tally(text: &[u8], bits: &Words, add: bool) -> (u32, u32) {
    /// No previous character: between tokens.
    const NONE: u32 = u32::MAX;
    /// Not a token character: a separator.
    const SEP: u32 = u32::MAX;
    let mut n = (0u32, 0u32);
    let mut prev = NONE;
    // Whether `prev` is its token's only character so far.
    let mut single = false;
    let mut i = 0usize;
    loop {
        // Past the end: a separator.
        let rest = text.get(i..).unwrap_or(&[]);
        let b0 = rest.first().map_or(0, |&b| b);
        // The next token character (or [`SEP`]), the last of its run
        // (ASCII letters and digits) or it again, whether the run goes on
        // past it, and whether a separator (or the end) follows, passed.
        let (c, last, more, end) = if b0.is_ascii_alphanumeric() {
            let (m, hits) = ascii_run(rest, bits, add);
            i += m;
            n.0 += hits;
            n.1 += m as u32 - 1;
            let last = text.get(i - 1).map_or(b0, |&b| b);
            // (Past a run, a byte below 0x80 is a separator.)
            let after = text.get(i).copied();
            if after.is_some_and(|b| b < 0x20 || b == 0x7F) {
                n.1 |= ESCAPES;
            }
            let end = after.is_none_or(|b| b < 0x80);
            i += usize::from(end);
            (u32::from(b0 | 0x20), u32::from(last | 0x20), m > 1, end)
        } else {
            let c = if b0 < 0x80 {
                // Not a letter or digit: a separator (0 past the end).
                if b0 < 0x20 && !rest.is_empty() || b0 == 0x7F {
                    n.1 |= ESCAPES;
                }
                i += 1;
                SEP
            } else {
                // By hand (the text is UTF-8).
                let (c, len) = match b0 {
                    0xC0..=0xDF => (b0 & 0x1F, 2),
                    0xE0..=0xEF => (b0 & 0x0F, 3),
                    _ => (b0 & 0x07, 4),
                };
                let c = text
                    .get(i + 1..i + len)
                    .unwrap_or(&[])
                    .iter()
                    .fold(u32::from(c), |c, &b| (c << 6) | u32::from(b & 0x3F));
                i += len;
                if c.wrapping_sub(0x80) < 0x20 || c | 1 == 0x2029 {
                    n.1 |= ESCAPES;
                }
                match u8::try_from(c) {
                    // (Overlong: not UTF-8.)
                    Ok(a) if a.is_ascii_alphanumeric() => u32::from(a.to_ascii_lowercase()),
                    Ok(a) if a < 0x80 => SEP,
                    _ if is_thai_mark(c) => continue,
                    _ => wide(c),
                }
            };
            (c, c, false, c == SEP)
        };
        if c != SEP {
            // It extends the token or starts it.
            if prev != NONE {
                take(&mut n, bits, add, key(prev, c));
            }
            single = prev == NONE && !more;
            prev = last;
        }
        if end {
            // A separator (or the end) ends the token.
            if single {
                take(&mut n, bits, add, prev);
            }
            if i > text.len() {
                break;
            }
            prev = NONE;
            single = false;
            continue;
        }
        if prev < 0x80 {
            continue;
        }
        // The three-byte characters after it (most of Thai), at their own
        // pace.
        let mut rest = text.get(i..).unwrap_or(&[]);
        let mut features = 0u32;
        while let [b0, b1, b2, ref tail @ ..] = *rest {
            // (A lead byte 0xE0..=0xEF: its bits, the rest 0.)
            let lead = b0 ^ 0xE0;
            let c = (u32::from(lead) << 12) | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F);
            if lead > 0x0F || c < 0x80 {
                break;
            }
            if c | 1 == 0x2029 {
                n.1 |= ESCAPES;
            }
            rest = tail;
            if !is_thai_mark(c) {
                let c = wide(c);
                let (w, h) = index(key(prev, c));
                n.0 += hit(bits, add, w, h);
                features += 1;
                prev = c;
            }
        }
        i = text.len() - rest.len();
        n.1 += features;
        if features > 0 {
            single = false;
        }
    }
    n
}

/// The run of ASCII letters and digits `s` starts with (at least one):
/// its length and the hits among its bigrams in `bits` (with `add`, it
/// adds them instead).
fn ascii_run(s: &[u8], bits: &Words, add: bool) -> (usize, u32) {
    /// Bytes in a word.
    const W: usize = core::mem::size_of::<usize>();
    // The length, a word at a time.
    let mut words = s.chunks_exact(W);
    let mut m = 0usize;
    let not = loop {
        let w = match words.next().map(<[u8; W]>::try_from) {
            Some(Ok(w)) => usize::from_le_bytes(w),
            // The last bytes, by hand (then 0: not a token).
            _ => {
                let last = words.remainder();
                let mut w = 0usize;
                let mut k = last.len();
                while let Some(&b) = k.checked_sub(1).and_then(|j| last.get(j)) {
                    w = (w << 8) | usize::from(b);
                    k -= 1;
                }
                w
            }
        };
        let not = not_token(w);
        if not != 0 {
            break not;
        }
        m += W;
    };
    // The first byte that is not (the lowest).
    m += (not.trailing_zeros() / 8) as usize;
    let run = s.get(..m).unwrap_or(&[]);
    let mut hits = 0u32;
    // One loop for a query being built, one for scoring.
    if add {
        each_pair(run, |w, h| {
            if let Some(word) = bits.get(w) {
                word.set(word.get() | 1u32.wrapping_shl(h));
            }
        });
    } else {
        each_pair(run, |w, h| {
            if let Some(word) = bits.get(w) {
                hits += word.get().wrapping_shr(h) & 1;
            }
        });
    }
    (m, hits)
}

/// Calls `f` with the place ([`index`]) of each bigram of `run` (ASCII
/// letters and digits).
fn each_pair(run: &[u8], mut f: impl FnMut(usize, u32)) {
    let Some((_, rest)) = run.split_first() else {
        return;
    };
    if rest.is_empty() {
        return;
    }
    // (A loop tested at its end: the bounds checks go.)
    let mut j = 0usize;
    loop {
        if let (Some(&a), Some(&b)) = (run.get(j), rest.get(j)) {
            // Lower-cased (digits have the bit already): `key(a, b)`.
            let (w, h) = index(u32::from(u16::from_le_bytes([a, b]) | 0x2020));
            f(w, h);
        }
        j += 1;
        if j == rest.len() {
            break;
        }
    }
}

/// Counts feature `k` into (hits, features), with `add` adding it to
/// `bits`.
fn take(n: &mut (u32, u32), bits: &Words, add: bool, k: u32) {
    let (w, h) = index(k);
    n.1 += 1;
    n.0 += hit(bits, add, w, h);
}

/// 1 when bit `h` (modulo 32) of word `w` of `bits` is set, else 0; with
/// `add`, the bit is set after (the word is stored back either way).
fn hit(bits: &Words, add: bool, w: usize, h: u32) -> u32 {
    let Some(word) = bits.get(w) else {
        return 0;
    };
    let v = word.get();
    word.set(v | u32::from(add).wrapping_shl(h));
    v.wrapping_shr(h) & 1
}

/// A character past ASCII as [`key`] takes it: its code point + 0x80, so
/// that its low byte cannot pass for an ASCII one (`U+0E32 U+0061` would
/// make the key of `"2o"`).
fn wide(c: u32) -> u32 {
    c + 0x80
}

/// The feature of bigram `a`, `b` (of a lone `a`: `key(a, 0)`, just `a`),
/// of characters as ASCII (lower-cased) or [`wide`]: for two ASCII
/// characters, their two bytes read little-endian.
fn key(a: u32, b: u32) -> u32 {
    a ^ (b << 8)
}

/// The place of feature `k` in the query: its word and, modulo 32, its
/// bit. A multiplicative hash: bit `(h >> 23) % 512` of the set, the top
/// 9 bits of `h = k × K`.
fn index(k: u32) -> (usize, u32) {
    let h = k.wrapping_mul(0x9E37_79B1);
    ((h >> 28) as usize, h >> 23)
}

impl Query {
    /// An empty query (everything scores 0).
    pub const fn new() -> Self {
        Self {
            bits: [const { Cell::new(0) }; WORDS],
        }
    }

    /// Adds the features of `text`.
    pub fn add(&mut self, text: &[u8]) {
        // (Nothing to score: the hits are counted against no features.)
        tally(text, &self.bits, true);
    }

    /// The relevance of a pair, 0..=1000.
    pub fn score(&self, key: &[u8], value: &[u8]) -> u16 {
        self.score_plain(key, value).0
    }

    /// [`Query::score`], and whether neither the key nor the value holds
    /// a character the context escapes (see [`ESCAPES`]).
    pub fn score_plain(&self, key: &[u8], value: &[u8]) -> (u16, bool) {
        let (key_hits, key_total) = tally(key, &self.bits, false);
        let (value_hits, value_total) = tally(value, &self.bits, false);
        let plain = (key_total | value_total) & ESCAPES == 0;
        let (key_total, value_total) = (key_total & !ESCAPES, value_total & !ESCAPES);
        // The key counts twice.
        let hits = 2 * key_hits + value_hits;
        let total = 2 * key_total + value_total;
        let score = hits
            .saturating_mul(1000)
            .checked_div(total.saturating_add(4))
            .unwrap_or(0);
        (score.min(1000) as u16, plain)
    }
}

impl Default for Query {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Query {
        /// The feature set's words.
        fn words(&self) -> [u32; WORDS] {
            core::array::from_fn(|i| self.bits[i].get())
        }
    }

    /// The features of `text` as they were cut before `tally` (the
    /// reference of the equivalence test).
    fn features(text: &[u8], mut f: impl FnMut(u32)) {
        fn lone(prev: Option<u32>, single: bool, f: &mut impl FnMut(u32)) {
            if let (Some(p), true) = (prev, single) {
                f(key(p, 0));
            }
        }
        let mut prev: Option<u32> = None;
        let mut single = false;
        let mut i = 0usize;
        while let Some(&b0) = text.get(i) {
            let (c, len) = match b0 {
                0x00..=0x7F => (u32::from(b0), 1),
                0xC0..=0xDF => (u32::from(b0 & 0x1F), 2),
                0xE0..=0xEF => (u32::from(b0 & 0x0F), 3),
                _ => (u32::from(b0 & 0x07), 4),
            };
            let c = text
                .get(i + 1..i + len)
                .unwrap_or(&[])
                .iter()
                .fold(c, |c, &b| (c << 6) | u32::from(b & 0x3F));
            i += len;
            let token_char = if c < 0x80 {
                let a = c as u8;
                a.is_ascii_alphanumeric()
                    .then(|| u32::from(a.to_ascii_lowercase()))
            } else if is_thai_mark(c) {
                continue;
            } else {
                Some(wide(c))
            };
            match token_char {
                Some(c) => {
                    match prev {
                        Some(p) => {
                            f(key(p, c));
                            single = false;
                        }
                        None => single = true,
                    }
                    prev = Some(c);
                }
                None => {
                    lone(prev, single, &mut f);
                    prev = None;
                    single = false;
                }
            }
        }
        lone(prev, single, &mut f);
    }

    /// The old `Query::add` and `Query::score`.
    fn reference(query: &[&[u8]], key: &[u8], value: &[u8]) -> ([u32; WORDS], bool, u16) {
        let mut bits = [0u32; WORDS];
        let mut empty = true;
        for q in query {
            features(q, |k| {
                let (w, h) = index(k);
                bits[w] |= 1 << (h % 32);
                empty = false;
            });
        }
        if empty {
            return (bits, empty, 0);
        }
        let (mut hits, mut total) = (0u32, 0u32);
        let has = |k: u32| {
            let (w, h) = index(k);
            bits[w] & (1 << (h % 32)) != 0
        };
        features(key, |h| {
            total += 2;
            if has(h) {
                hits += 2;
            }
        });
        features(value, |h| {
            total += 1;
            if has(h) {
                hits += 1;
            }
        });
        let score = (hits * 1000 / (total + 4)).min(1000) as u16;
        (bits, empty, score)
    }

    fn text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let unit = prop_oneof![
            any::<u8>().prop_map(|b| vec![b]),
            proptest::sample::select(vec![
                "a",
                "Z",
                "9",
                " ",
                "_",
                "-",
                "?",
                "ก",
                "แ",
                "่",
                "ั",
                "ม",
                "é",
                "😀",
                "\u{E4E}",
                // Runs of ASCII letters and digits across words.
                "Wifi",
                "passWord7",
                "0123456789abcdef",
            ])
            .prop_map(|s| s.as_bytes().to_vec()),
            // Not UTF-8: overlong ASCII, cut and stray sequences.
            proptest::sample::select(vec![
                vec![0xE0, 0x81, 0x81],
                vec![0xE0, 0x80, 0xB0],
                vec![0xE0, 0x80, 0xA0],
                vec![0xC1, 0x81],
                vec![0xE0],
                vec![0xE0, 0xB8],
                vec![0xB8],
                vec![0xF0, 0x9F],
            ]),
        ];
        proptest::collection::vec(unit, 0..40).prop_map(|v| v.concat())
    }

    /// UTF-8 with the characters the context escapes and their neighbours.
    fn context_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let unit = proptest::sample::select(vec![
            "a", "Z", "9", " ", "_", "ก", "่", "é", "😀", "\n", "\r", "\t", "\u{1}", "\u{1f}",
            "\u{7f}", "\u{80}", "\u{85}", "\u{9f}", "\u{a0}", "\u{2027}", "\u{2028}", "\u{2029}",
            "\u{202a}", "—", "wifi7",
        ]);
        proptest::collection::vec(unit, 0..24).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        #![proptest_config(crate::testing::regressions("tests/proptest-regressions/recall.txt"))]
        /// `score_plain` says "nothing to escape" exactly when the context
        /// copies the key and the value as they are, and scores as `score`.
        #[test]
        fn the_score_knows_what_the_context_escapes(
            query in context_text(),
            key in context_text(),
            value in context_text(),
        ) {
            let mut q = Query::new();
            q.add(query.as_bytes());
            let plain = |t: &str| crate::text::escaped_len(t.as_bytes()) == t.len();
            let (score, got) = q.score_plain(key.as_bytes(), value.as_bytes());
            proptest::prop_assert_eq!(got, plain(&key) && plain(&value));
            proptest::prop_assert_eq!(score, q.score(key.as_bytes(), value.as_bytes()));
            let (_, _, want) = reference(&[query.as_bytes()], key.as_bytes(), value.as_bytes());
            proptest::prop_assert_eq!(score, want);
        }
    }

    proptest::proptest! {
        #![proptest_config(crate::testing::regressions("tests/proptest-regressions/recall.txt"))]
        /// `tally` cuts and counts the features the closures did, for any
        /// bytes (UTF-8 or not).
        #[test]
        fn tally_counts_what_the_closures_did(
            query in proptest::collection::vec(text(), 0..3),
            key in text(),
            value in text(),
        ) {
            let mut q = Query::new();
            for t in &query {
                q.add(t);
            }
            let refs: Vec<&[u8]> = query.iter().map(|t| t.as_slice()).collect();
            let (bits, empty, score) = reference(&refs, &key, &value);
            proptest::prop_assert_eq!(q.words(), bits);
            proptest::prop_assert_eq!(q.words() == [0; WORDS], empty);
            proptest::prop_assert_eq!(q.score(&key, &value), score);
        }
    }

    /// `tally` as the closures: the bits of the query of `query`, and the
    /// score of (`key`, `value`).
    fn same_as_reference(query: &[&[u8]], key: &[u8], value: &[u8]) {
        let mut q = Query::new();
        for t in query {
            q.add(t);
        }
        let (bits, _, score) = reference(query, key, value);
        assert_eq!(q.words(), bits, "query {query:?}");
        assert_eq!(q.score(key, value), score, "{query:?} {key:?} {value:?}");
    }

    /// Runs of ASCII letters and digits of every length around the word
    /// (7, 8, 9, 16 bytes...), upper-case and digits, ending at a
    /// separator (also those next to the letters and digits), a Thai
    /// character or mark, another character, a cut one or the end of the
    /// text, inside the word or past it.
    #[test]
    fn runs_at_word_edges() {
        const RUN: &[u8] = b"aZ9bY8cX7dW6eV5fU4gT3hS2";
        let before: [&[u8]; 4] = [b"", b" ", "ก".as_bytes(), b"x_"];
        let after: [&[u8]; 17] = [
            b"",
            b" ",
            // Next to the ranges of letters and digits (and a digit once
            // lower-cased).
            b"\x19",
            b"/",
            b":",
            b"@",
            b"[",
            b"`",
            b"{",
            b"_Qq",
            b"-1",
            "ก".as_bytes(),
            "่a".as_bytes(),
            "é".as_bytes(),
            &[0xE0],
            &[0xC1, 0x81],
            // An overlong space: a separator past ASCII.
            &[0xC0, 0xA0],
        ];
        for n in 0..=RUN.len() {
            for (b, a) in before
                .iter()
                .flat_map(|b| after.iter().map(move |a| (b, a)))
            {
                let text = [b, &RUN[..n], a].concat();
                // As the query, as the key and as the value, against
                // runs of other lengths.
                let other = &RUN[n / 2..];
                same_as_reference(&[&text], &text, other);
                same_as_reference(&[other], other, &text);
                same_as_reference(&[&text, other], &RUN[..n], &text);
            }
        }
    }

    /// The hash spreads the bigrams: those of ASCII letters and digits with
    /// one same first (or second) character all take different bits, and
    /// no two bigrams of ASCII and Thai characters share a key.
    #[test]
    fn bigrams_spread() {
        let ascii: Vec<u32> = (u32::from(b'a')..=u32::from(b'z'))
            .chain(u32::from(b'0')..=u32::from(b'9'))
            .collect();
        let bit = |k: u32| {
            let (w, h) = index(k);
            w * 32 + (h % 32) as usize
        };
        for &a in &ascii {
            let mut firsts: Vec<usize> = ascii.iter().map(|&b| bit(key(a, b))).collect();
            let mut seconds: Vec<usize> = ascii.iter().map(|&b| bit(key(b, a))).collect();
            for v in [&mut firsts, &mut seconds] {
                v.sort_unstable();
                v.dedup();
                assert_eq!(v.len(), ascii.len());
            }
        }
        let thai = (0x0E01..=0x0E5B).filter(|&c| !is_thai_mark(c)).map(wide);
        let chars: Vec<u32> = ascii.iter().copied().chain(thai).collect();
        let mut keys: Vec<u32> = chars
            .iter()
            .flat_map(|&a| chars.iter().map(move |&b| key(a, b)))
            .chain(chars.iter().copied())
            .collect();
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }

    fn score(q: &str, k: &str, v: &str) -> u16 {
        let mut query = Query::new();
        query.add(q.as_bytes());
        query.score(k.as_bytes(), v.as_bytes())
    }

    #[test]
    fn english_and_thai_match_their_own() {
        assert!(score("what is my wifi password?", "wifi_password", "hunter2") > 300);
        assert!(
            score("what is my wifi password?", "wifi_password", "x")
                > score("what is my wifi password?", "cat_name", "Mali")
        );
        assert!(score("แมวของฉันชื่ออะไร", "แมว", "ชื่อมะลิ") > 300);
        assert!(score("แมวของฉันชื่ออะไร", "แมว", "x") > score("แมวของฉันชื่ออะไร", "บ้าน", "เชียงใหม่"));
        // Tone and vowel marks do not matter.
        assert!(score("แม่", "แม", "") > 0);
        assert_eq!(score("", "anything", "at all"), 0);
        assert_eq!(score("a b c", "", ""), 0);
    }
}
