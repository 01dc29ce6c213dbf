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
//! A query is the set of its features, hashed into 512 bits (64 bytes). A
//! pair's score is the share of its features found in the query, the key
//! counting twice, scaled to 0..=1000: `1000 × hits / (features + 4)` (the
//! `+ 4` keeps a one-feature pair from scoring a full 1000 on one lucky
//! bigram).

/// Bits of the query feature set.
const QUERY_BITS: usize = 512;

/// The hashed feature set of a query.
#[derive(Clone, Copy)]
pub struct Query {
    /// (No features: no bit set, and every score 0.)
    bits: [u32; QUERY_BITS / 32],
}

/// Skipped when cutting features: Thai vowel signs above/below and tone
/// marks (U+0E31, U+0E34..=U+0E3A, U+0E47..=U+0E4E).
fn is_thai_mark(c: u32) -> bool {
    matches!(c, 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E)
}

/// Words of the query feature set.
const WORDS: usize = QUERY_BITS / 32;

/// Counts the features of `text` (UTF-8: the store's pairs and the turns
/// are checked when they come in) and those of them in `bits`: (hits,
/// features). With `set`, also adds each feature to it.
///
/// One loop with no closure call per feature: a character is read (ASCII
/// at once), then it either extends the token (a bigram with the previous
/// character) or ends it (a token of one character is its own feature).
fn tally(text: &[u8], bits: &[u32; WORDS], mut set: Option<&mut [u32; WORDS]>) -> (u32, u32) {
    /// No previous character: between tokens.
    const NONE: u32 = u32::MAX;
    let mut n = (0u32, 0u32);
    let mut prev = NONE;
    // Whether `prev` is its token's only character so far.
    let mut single = false;
    let mut i = 0usize;
    loop {
        // The common case at its own pace: ASCII letters and digits
        // extending a token.
        if prev != NONE {
            // One loop for a query being built, one for scoring.
            let (last, features) = match set.as_deref_mut() {
                Some(s) => run(text, &mut i, prev, bits, &mut n.0, Some(s)),
                None => run(text, &mut i, prev, bits, &mut n.0, None),
            };
            prev = last;
            if features > 0 {
                n.1 += features;
                single = false;
            }
        }
        let Some(&b0) = text.get(i) else {
            break;
        };
        let c = if b0 < 0x80 {
            i += 1;
            u32::from(b0)
        } else {
            // By hand (the text is UTF-8).
            let (c, len) = match b0 {
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
            c
        };
        let c = if c < 0x80 {
            match ascii_token(c as u8) {
                Some(c) => c,
                None => {
                    if prev != NONE && single {
                        take(&mut n, bits, set.as_deref_mut(), mix(prev, 0));
                    }
                    prev = NONE;
                    single = false;
                    continue;
                }
            }
        } else if is_thai_mark(c) {
            continue;
        } else {
            c
        };
        single = prev == NONE;
        if !single {
            take(&mut n, bits, set.as_deref_mut(), mix(prev, c));
        }
        prev = c;
    }
    if prev != NONE && single {
        take(&mut n, bits, set, mix(prev, 0));
    }
    n
}

/// An ASCII letter (lower-cased) or digit: a token character; the rest of
/// ASCII separates tokens.
#[inline(always)]
fn ascii_token(b: u8) -> Option<u32> {
    /// The token character of each ASCII byte; 0 for a separator.
    const TOKEN: [u8; 128] = {
        let mut t = [0u8; 128];
        let mut b = 0u8;
        while b < 128 {
            t[b as usize] = match b {
                b'a'..=b'z' | b'0'..=b'9' => b,
                b'A'..=b'Z' => b | 0x20,
                _ => 0,
            };
            b += 1;
        }
        t
    };
    match TOKEN.get(usize::from(b)) {
        Some(&t) if t != 0 => Some(u32::from(t)),
        _ => None,
    }
}

/// The bigrams of the token characters from `text[*i]` on (ASCII letters
/// and digits, and three-byte characters: most of Thai), after token
/// character `prev`: counts their hits, adds them to `set`, moves `*i` past
/// them. Returns the last character and the bigrams counted. Anything else
/// (a separator, a character of 2 or 4 bytes, a cut one) is left to the
/// caller.
#[inline(always)]
fn run(
    text: &[u8],
    i: &mut usize,
    mut prev: u32,
    bits: &[u32; WORDS],
    hits: &mut u32,
    mut set: Option<&mut [u32; WORDS]>,
) -> (u32, u32) {
    let mut features = 0u32;
    while let Some(&b) = text.get(*i) {
        let c = if b < 0x80 {
            let Some(c) = ascii_token(b) else {
                break;
            };
            *i += 1;
            c
        } else if b & 0xF0 == 0xE0 {
            let (Some(&b1), Some(&b2)) = (text.get(*i + 1), text.get(*i + 2)) else {
                break;
            };
            let c =
                (u32::from(b & 0x0F) << 12) | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F);
            if c < 0x80 {
                break;
            }
            *i += 3;
            if is_thai_mark(c) {
                continue;
            }
            c
        } else {
            break;
        };
        let (w, m) = bit(mix(prev, c));
        if let Some(&word) = bits.get(w) {
            *hits += u32::from(word & m != 0);
        }
        if let Some(s) = set.as_deref_mut() {
            if let Some(word) = s.get_mut(w) {
                *word |= m;
            }
        }
        features += 1;
        prev = c;
    }
    (prev, features)
}

/// Counts feature `h` into (hits, features), adding it to `set`.
#[inline(always)]
fn take(n: &mut (u32, u32), bits: &[u32; WORDS], set: Option<&mut [u32; WORDS]>, h: u32) {
    let (w, m) = bit(h);
    n.1 += 1;
    if bits.get(w).is_some_and(|&word| word & m != 0) {
        n.0 += 1;
    }
    if let Some(word) = set.and_then(|s| s.get_mut(w)) {
        *word |= m;
    }
}

fn mix(a: u32, b: u32) -> u32 {
    (a.wrapping_mul(0x9E37_79B1) ^ b).wrapping_mul(0x85EB_CA6B)
}

fn bit(h: u32) -> (usize, u32) {
    let i = (h >> 23) as usize % QUERY_BITS;
    (i / 32, 1 << (i % 32))
}

impl Query {
    /// An empty query (everything scores 0).
    pub const fn new() -> Self {
        Self {
            bits: [0; QUERY_BITS / 32],
        }
    }

    /// Adds the features of `text`.
    pub fn add(&mut self, text: &[u8]) {
        tally(text, &[0; WORDS], Some(&mut self.bits));
    }

    /// The relevance of a pair, 0..=1000.
    pub fn score(&self, key: &[u8], value: &[u8]) -> u16 {
        let (key_hits, key_total) = tally(key, &self.bits, None);
        let (value_hits, value_total) = tally(value, &self.bits, None);
        // The key counts twice.
        let hits = 2 * key_hits + value_hits;
        let total = 2 * key_total + value_total;
        let score = hits
            .saturating_mul(1000)
            .checked_div(total.saturating_add(4))
            .unwrap_or(0);
        score.min(1000) as u16
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

    /// The features of `text` as they were cut before `tally` (the
    /// reference of the equivalence test).
    fn features(text: &[u8], mut f: impl FnMut(u32)) {
        fn lone(prev: Option<u32>, single: bool, f: &mut impl FnMut(u32)) {
            if let (Some(p), true) = (prev, single) {
                f(mix(p, 0));
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
                Some(c)
            };
            match token_char {
                Some(c) => {
                    match prev {
                        Some(p) => {
                            f(mix(p, c));
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
            features(q, |h| {
                let (w, m) = bit(h);
                bits[w] |= m;
                empty = false;
            });
        }
        if empty {
            return (bits, empty, 0);
        }
        let (mut hits, mut total) = (0u32, 0u32);
        let has = |h: u32| {
            let (w, m) = bit(h);
            bits[w] & m != 0
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
                "a", "Z", "9", " ", "_", "-", "?", "ก", "แ", "่", "ั", "ม", "é", "😀", "\u{E4E}",
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

    proptest::proptest! {
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
            proptest::prop_assert_eq!(q.bits, bits);
            proptest::prop_assert_eq!(q.bits == [0; WORDS], empty);
            proptest::prop_assert_eq!(q.score(&key, &value), score);
        }
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
