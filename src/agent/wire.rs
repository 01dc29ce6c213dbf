//! The backend protocol's JSON, with serde-json-core: the request bodies it
//! writes (the prompt and context, a tool round's `tool_result`, the opt-in
//! `tools` member and summary request) and the reply it reads (answer text,
//! or exactly one `tool_call`). The format is described once, in
//! `docs/BACKEND.md` (§1 the request, §2 the tool request, §4 the summary
//! request).

use serde::{Deserialize, Serialize, Serializer};
use serde_json_core::str::EscapedStr;

/// A tool request as read from a reply: the escaped text of its strings.
pub struct ToolCall<'a> {
    /// The escaped tool name.
    pub name: &'a str,
    /// The escaped argument; `None` for `null` or absent.
    pub arg: Option<&'a str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyDoc<'a> {
    #[serde(borrow)]
    tool_call: CallDoc<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallDoc<'a> {
    #[serde(borrow)]
    name: EscapedStr<'a>,
    #[serde(borrow, default)]
    arg: Option<EscapedStr<'a>>,
}

/// Whether `reply` is exactly a tool request; its strings are checked to be
/// valid JSON strings (`unescape` will succeed on them).
pub fn tool_call(reply: &[u8]) -> Option<ToolCall<'_>> {
    // A cheap first look: most replies are text.
    let first = reply
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))?;
    if *first != b'{' {
        return None;
    }
    // Member names may be escaped too ("tool\u005fcall"): serde-json-core
    // unescapes them into this buffer (the values stay borrowed, escaped).
    let mut keys = [0u8; 16];
    let (doc, _) = serde_json_core::from_slice_escaped::<ReplyDoc<'_>>(reply, &mut keys).ok()?;
    let call = ToolCall {
        name: doc.tool_call.name.0,
        arg: doc.tool_call.arg.map(|a| a.0),
    };
    let valid = |s: &str| unescape(s, &mut Discard).is_some();
    (valid(call.name) && call.arg.is_none_or(valid)).then_some(call)
}

/// Where [`unescape`] puts decoded bytes.
pub trait Sink {
    /// Takes one decoded piece; false when there is no room.
    fn put(&mut self, bytes: &[u8]) -> bool;
}

/// Counts nothing, keeps nothing: validation only.
pub struct Discard;

impl Sink for Discard {
    fn put(&mut self, _: &[u8]) -> bool {
        true
    }
}

/// A bounded buffer that keeps what fits, cut on a character boundary, and
/// drops the rest (for echoing a name).
pub struct Capped<'a> {
    /// The storage.
    pub buf: &'a mut [u8],
    /// Bytes used.
    pub len: usize,
}

impl<'a> Capped<'a> {
    /// An empty buffer over `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }
}

impl Sink for Capped<'_> {
    fn put(&mut self, bytes: &[u8]) -> bool {
        let room = self.buf.len() - self.len;
        let take = crate::text::floor_char_boundary(bytes, room);
        if let Some(dst) = self.buf.get_mut(self.len..self.len + take) {
            crate::text::copy_prefix(dst, bytes);
            self.len += take;
        }
        true
    }
}

/// A bounded buffer.
pub struct Buf<'a> {
    /// The storage.
    pub buf: &'a mut [u8],
    /// Bytes used.
    pub len: usize,
}

impl<'a> Buf<'a> {
    /// An empty buffer over `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// The bytes written.
    pub fn bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

impl Sink for Buf<'_> {
    fn put(&mut self, bytes: &[u8]) -> bool {
        let end = self.len + bytes.len();
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                crate::text::copy_prefix(dst, bytes);
                self.len = end;
                true
            }
            None => false,
        }
    }
}

fn hex4(s: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in s.get(..4)? {
        v = v * 16 + char::from(c).to_digit(16)?;
    }
    Some(v)
}

/// Decodes the escaped text of a JSON string (what serde-json-core hands
/// out as an `EscapedStr`) into `out`. `None` for what JSON does not allow:
/// a raw control character, an unknown escape, a lone surrogate — or when
/// `out` refuses a piece. UTF-16 surrogate pairs are joined.
pub fn unescape(s: &str, out: &mut impl Sink) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0usize;
    let mut n = 0usize;
    while let Some(&c) = b.get(i) {
        if c < 0x20 {
            return None;
        }
        if c != b'\\' {
            // A run of plain bytes at once.
            let run = b
                .get(i..)?
                .iter()
                .position(|&x| x == b'\\' || x < 0x20)
                .unwrap_or(b.len() - i);
            let piece = b.get(i..i + run)?;
            if !out.put(piece) {
                return None;
            }
            n += run;
            i += run;
            continue;
        }
        let e = *b.get(i + 1)?;
        let (ch, take) = match e {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'/' => ('/', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let hi = hex4(b.get(i + 2..)?)?;
                if (0xDC00..0xE000).contains(&hi) {
                    return None; // a lone low surrogate
                }
                if (0xD800..0xDC00).contains(&hi) {
                    if b.get(i + 6..i + 8)? != b"\\u" {
                        return None; // a lone high surrogate
                    }
                    let lo = hex4(b.get(i + 8..)?)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return None;
                    }
                    let cp = 0x1_0000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    (char::from_u32(cp)?, 12)
                } else {
                    (char::from_u32(hi)?, 6)
                }
            }
            _ => return None,
        };
        let mut tmp = [0u8; 4];
        let enc = ch.encode_utf8(&mut tmp).as_bytes();
        if !out.put(enc) {
            return None;
        }
        n += enc.len();
        i += take;
    }
    Some(n)
}

/// Bytes `s` takes inside a JSON string as serde-json-core writes it: two
/// for `"` `\` and the short escapes, six for other control characters.
pub fn escaped_len(s: &[u8]) -> usize {
    s.iter()
        .map(|&c| match c {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 2,
            0x00..=0x1F => 6,
            _ => 1,
        })
        .sum()
}

/// The longest prefix of the text `s` that takes at most `room` bytes
/// escaped, cut on a character boundary: (its bytes, its escaped bytes).
pub fn fit(s: &[u8], room: usize) -> (usize, usize) {
    let (mut take, mut esc) = (0usize, 0usize);
    while let Some(&lead) = s.get(take) {
        // A character's bytes; past ASCII each escapes to itself.
        let len = match lead {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        }
        .min(s.len() - take);
        let cost = if lead < 0x80 {
            escaped_len(&[lead])
        } else {
            len
        };
        if esc + cost > room {
            break;
        }
        take += len;
        esc += cost;
    }
    (take, esc)
}

/// The result of a tool round as the follow-up request reports it.
#[derive(Serialize)]
pub struct ToolResult<'a> {
    /// The tool the backend asked for (as it asked, cut to 64 bytes).
    pub name: &'a str,
    /// "ok", "refused", "error" or "unknown".
    pub status: &'a str,
    /// `str()` of what the tool returned, the refusal, or the error text.
    pub result: &'a str,
}

/// The registry as the opt-in `tools` member lists it: its first tools, as
/// many as the third field says (those that fit the body).
pub struct Tools<'a>(
    pub &'a super::registry::Registry,
    pub &'a crate::safety::rate::RateTable,
    pub usize,
);

#[derive(Serialize)]
struct ToolDoc<'a> {
    name: &'a str,
    risk: u8,
}

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        for t in self.0.iter(self.1).take(self.2) {
            let name = core::str::from_utf8(t.name).unwrap_or("");
            seq.serialize_element(&ToolDoc { name, risk: t.risk })?;
        }
        seq.end()
    }
}

/// One request body.
#[derive(Serialize)]
pub struct Request<'a> {
    /// The user's prompt.
    pub prompt: &'a str,
    /// The rendered context (`claw_session_build_context`).
    pub context: &'a str,
    /// After a tool round: what the tool did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResult<'a>>,
    /// Opt-in: the tool registry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Tools<'a>>,
}

/// An opt-in summary request.
#[derive(Serialize)]
pub struct SummaryRequest<'a> {
    /// The turns to fold, as "role: text" lines (the old summary first).
    pub summarize: &'a str,
    /// The most bytes the summary may have.
    pub max_bytes: u16,
}

/// Serializes `value` into `out`; `None` when it does not fit.
pub fn write<T: Serialize>(value: &T, out: &mut [u8]) -> Option<usize> {
    serde_json_core::to_slice(value, out).ok()
}

/// `s` as a `&str`. The core only hands in text it has checked; anything
/// else becomes the empty string rather than invalid JSON.
pub fn as_str(s: &[u8]) -> &str {
    core::str::from_utf8(s).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::string::String;
    use std::vec::Vec;

    fn decode(s: &str) -> Option<String> {
        let mut buf = [0u8; 256];
        let mut b = Buf::new(&mut buf);
        unescape(s, &mut b)?;
        Some(String::from_utf8(b.bytes().to_vec()).unwrap())
    }

    #[test]
    fn tool_calls_are_strict() {
        let ok = |s: &str| {
            tool_call(s.as_bytes())
                .map(|c| (decode(c.name).unwrap(), c.arg.map(|a| decode(a).unwrap())))
        };
        assert_eq!(
            ok(r#"{"tool_call":{"name":"led","arg":"toggle"}}"#),
            Some(("led".into(), Some("toggle".into())))
        );
        assert_eq!(
            ok(" {\n\"tool_call\" : { \"arg\" : null , \"name\" : \"uptime\" } } \n"),
            Some(("uptime".into(), None))
        );
        assert_eq!(
            ok(r#"{"tool_call":{"name":"echo"}}"#),
            Some(("echo".into(), None))
        );
        assert_eq!(
            ok(r#"{"tool_call":{"name":"echo","arg":"\u0e2a\ud83d\ude00 \"q\""}}"#),
            Some(("echo".into(), Some("ส😀 \"q\"".into())))
        );
        for text in [
            "hello",
            "",
            "{",
            r#"{"tool_call":{"name":"led"},"x":1}"#,
            r#"{"tool_call":{"name":"led","name":"echo"}}"#,
            r#"{"tool_call":{"name":"led","extra":1}}"#,
            r#"{"tool_call":{"name":5}}"#,
            r#"{"tool_call":{"arg":"x"}}"#,
            r#"{"tool_call":{"name":"led"}} x"#,
            "{\"tool_call\":{\"name\":\"le\nd\"}}",
            r#"{"tool_call":{"name":"\ud800"}}"#,
            r#"{"tool_call":{"name":"\udc00"}}"#,
            r#"{"tool_call":{"name":"\q"}}"#,
            r#"{"tool_call":{"name":"led","arg":["x"]}}"#,
            r#"{"tool_call":[]}"#,
        ] {
            assert!(
                tool_call(text.as_bytes()).is_none(),
                "{text:?} is reply text"
            );
        }
        let deep = "{\"tool_call\":".to_string() + &"[".repeat(5000);
        assert!(tool_call(deep.as_bytes()).is_none());
    }

    #[test]
    fn requests_escape_like_escaped_len_says() {
        let prompt = "สวัสดี \"x\"\\\n\t\u{1}end";
        let mut buf = [0u8; 256];
        let n = write(
            &Request {
                prompt,
                context: "c",
                tool_result: None,
                tools: None,
            },
            &mut buf,
        )
        .unwrap();
        let body = std::str::from_utf8(&buf[..n]).unwrap();
        let v = json::parse(body).unwrap();
        assert_eq!(v["prompt"].as_str(), Some(prompt));
        assert_eq!(
            n,
            r#"{"prompt":"","context":"c"}"#.len() + escaped_len(prompt.as_bytes())
        );
        let mut small = [0u8; 10];
        assert!(
            write(
                &SummaryRequest {
                    summarize: "a",
                    max_bytes: 255
                },
                &mut small
            )
            .is_none()
        );
        let n = write(
            &Request {
                prompt: "p",
                context: "",
                tool_result: Some(ToolResult {
                    name: "led",
                    status: "ok",
                    result: "True",
                }),
                tools: None,
            },
            &mut buf,
        )
        .unwrap();
        assert_eq!(
            &buf[..n],
            br#"{"prompt":"p","context":"","tool_result":{"name":"led","status":"ok","result":"True"}}"#
        );
        let _: Vec<u8> = Vec::new();
    }
}
