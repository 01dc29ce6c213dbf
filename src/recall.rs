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
    bits: [u32; QUERY_BITS / 32],
    empty: bool,
}

/// Skipped when cutting features: Thai vowel signs above/below and tone
/// marks (U+0E31, U+0E34..=U+0E3A, U+0E47..=U+0E4E).
fn is_thai_mark(c: u32) -> bool {
    matches!(c, 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E)
}

/// Calls `f` with the hash of each feature of `text` (UTF-8: the store's
/// pairs and the turns are checked when they come in).
fn features(text: &[u8], mut f: impl FnMut(u32)) {
    // A token of one character is its own feature.
    fn lone(prev: Option<u32>, single: bool, f: &mut impl FnMut(u32)) {
        if let (Some(p), true) = (prev, single) {
            f(mix(p, 0));
        }
    }
    let mut prev: Option<u32> = None;
    let mut single = false;
    let mut i = 0usize;
    while let Some(&b0) = text.get(i) {
        // One character, decoded by hand (the text is UTF-8): ASCII at once.
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
            empty: true,
        }
    }

    /// Adds the features of `text`.
    pub fn add(&mut self, text: &[u8]) {
        features(text, |h| {
            let (w, m) = bit(h);
            if let Some(word) = self.bits.get_mut(w) {
                *word |= m;
                self.empty = false;
            }
        });
    }

    fn has(&self, h: u32) -> bool {
        let (w, m) = bit(h);
        self.bits.get(w).is_some_and(|&word| word & m != 0)
    }

    /// The relevance of a pair, 0..=1000.
    pub fn score(&self, key: &[u8], value: &[u8]) -> u16 {
        if self.empty {
            return 0;
        }
        let (mut hits, mut total) = (0u32, 0u32);
        features(key, |h| {
            total += 2;
            if self.has(h) {
                hits += 2;
            }
        });
        features(value, |h| {
            total += 1;
            if self.has(h) {
                hits += 1;
            }
        });
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
