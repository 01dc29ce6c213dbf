//! The fields a caller asks a record for, and what is kept of them.

use crate::kernel::packed::{Bad, Packed, Tagged};

/// A string field the caller wants decoded into its buffer (or only
/// checked, see [`StrField::counted`]).
pub struct StrField<'a> {
    /// The field name in the file (a reference to a `&'static [u8]`
    /// constant: a word, not a slice's two; 16 bytes a field).
    pub name: &'static &'static [u8],
    /// Where the decoded UTF-8 goes.
    pub buf: &'a mut [u8],
    /// Decoded length, valid when `seen`.
    pub len: u8,
    /// Longest decoded length accepted (a byte each, 20 bytes a field: a
    /// record's fields sit on the deepest frames of every load).
    pub max: u8,
    /// Whether the record had this field.
    pub seen: bool,
    /// Whether a record without this field is not a record.
    pub required: bool,
}

/// A [`StrField`]'s longest length (the longest field, a session
/// message, is 255 bytes).
fn clamp_max(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

impl<'a> StrField<'a> {
    /// A field called `name` decoded into `buf`.
    pub fn new(name: &'static &'static [u8], buf: &'a mut [u8]) -> Self {
        let max = clamp_max(buf.len());
        Self {
            name,
            buf,
            max,
            len: 0,
            seen: false,
            required: true,
        }
    }

    /// Like [`StrField::new`], but a record may lack it.
    pub fn optional(name: &'static &'static [u8], buf: &'a mut [u8]) -> Self {
        Self {
            required: false,
            ..Self::new(name, buf)
        }
    }

    /// A field that is checked (escapes, UTF-8, at most `max` bytes
    /// decoded) but not kept: no buffer, so no stack for one.
    pub fn counted(name: &'static &'static [u8], max: usize) -> Self {
        Self {
            name,
            buf: &mut [],
            max: clamp_max(max),
            len: 0,
            seen: false,
            required: true,
        }
    }

    /// The decoded value.
    pub fn value(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

/// Most numbers a flat array field holds (`"st"`, the session statistics).
pub const ARRAY_MAX: usize = 7;

/// A scalar value: `true` (`"end"`, `"pin"`, `"del"`), non-negative
/// integers (`"seq"`, `"keep"`), a flat array of them (`"st"`); anything
/// else that is a scalar is accepted and skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// Field absent.
    Absent,
    /// `true`.
    True,
    /// `false`, `null` or a number that is not read.
    Other,
    /// A non-negative integer, saturating at `u32::MAX`.
    Uint(u32),
    /// A flat array of at most [`ARRAY_MAX`] non-negative integers (more,
    /// or anything else in it, makes the line invalid): how many; the
    /// values are in the [`ScalarSet`]'s array, if it has one (kept out of
    /// every field and every reader).
    Array(u8),
}

impl Scalar {
    /// The integer value, 0 when absent or not an integer.
    pub fn uint(self) -> u32 {
        match self {
            Scalar::Uint(v) => v,
            _ => 0,
        }
    }
}

/// Longest scalar field name: the names of both files are short (`"end"`,
/// `"tout"`), and a record with eleven of them sits on the deepest stack
/// path of the session load (4 bytes a name, not a slice's 8).
pub const SCALAR_NAME_MAX: usize = 4;

/// Longest [`ScalarField`] name (`"pin"`, `"del"`, `"seq"`, `"n"`).
pub const FIELD_NAME_MAX: usize = 3;

/// A scalar field the caller wants: 8 bytes (the fields of a store record
/// sit on the deepest frame of every store read).
pub struct ScalarField {
    /// The field name in the file, NUL-padded (a decoded name holds no NUL:
    /// `\u0000` is refused); 0xFF bytes (never in UTF-8) for a name longer
    /// than [`FIELD_NAME_MAX`], which matches nothing.
    name: [u8; FIELD_NAME_MAX],
    /// What the value is: [`Scalar`]'s variant, in its order.
    pub(super) kind: u8,
    /// The integer, or an array's length.
    val: u32,
}

impl ScalarField {
    /// A field called `name` (at most [`FIELD_NAME_MAX`] bytes; a longer
    /// or empty one is never found), absent until read.
    pub const fn new(name: &'static [u8]) -> Self {
        // Written out: built at run time (for each record read) it must not
        // cost a call. (Calling `scalar_name`, even `#[inline(always)]`,
        // took more instructions on a full `build_context` and on a memory
        // get.)
        let name = match *name {
            [] => [0; FIELD_NAME_MAX],
            [a] => [a, 0, 0],
            [a, b] => [a, b, 0],
            [a, b, c] => [a, b, c],
            _ => [0xFF; FIELD_NAME_MAX],
        };
        Self {
            name,
            kind: 0,
            val: 0,
        }
    }

    /// Whether the field is called `name` (not empty).
    pub(super) fn is(&self, name: &[u8]) -> bool {
        let [a, b, c] = self.name;
        name_is(&[a, b, c, 0], name)
    }

    /// The value found.
    #[inline(always)] // stack: see docs/STACK.md
    pub fn value(&self) -> Scalar {
        match self.kind {
            1 => Scalar::True,
            2 => Scalar::Other,
            3 => Scalar::Uint(self.val),
            4 => Scalar::Array(self.val as u8),
            _ => Scalar::Absent,
        }
    }

    pub(super) fn set(&mut self, v: Scalar) {
        (self.kind, self.val) = match v {
            Scalar::Absent => (0, 0),
            Scalar::True => (1, 0),
            Scalar::Other => (2, 0),
            Scalar::Uint(x) => (3, x),
            Scalar::Array(n) => (4, u32::from(n)),
        };
    }
}

/// A field name as [`ScalarField`] keeps it (NUL-padded; 0xFF bytes, which
/// match nothing, when longer than [`SCALAR_NAME_MAX`]).
pub const fn scalar_name(name: &'static [u8]) -> [u8; SCALAR_NAME_MAX] {
    match *name {
        [] => [0; SCALAR_NAME_MAX],
        [a] => [a, 0, 0, 0],
        [a, b] => [a, b, 0, 0],
        [a, b, c] => [a, b, c, 0],
        [a, b, c, d] => [a, b, c, d],
        _ => [0xFF; SCALAR_NAME_MAX],
    }
}

/// Whether the padded name `field` is `name` (not empty).
fn name_is(field: &[u8; SCALAR_NAME_MAX], name: &[u8]) -> bool {
    let key = padded(name);
    key != 0 && key == u32::from_le_bytes(*field)
}

/// `name` as [`ScalarField`] keeps it, as a word (compared without a
/// `memcmp` call under the parse); 0, which no field's is, when it cannot
/// be one: empty (a decoded name holds no NUL) or longer than
/// [`SCALAR_NAME_MAX`] bytes.
pub(super) fn padded(name: &[u8]) -> u32 {
    u32::from_le_bytes(match *name {
        [a] => [a, 0, 0, 0],
        [a, b] => [a, b, 0, 0],
        [a, b, c] => [a, b, c, 0],
        [a, b, c, d] => [a, b, c, d],
        _ => return 0,
    })
}

/// Most fields of a [`ScalarSet`].
pub const SET_MAX: usize = 11;

/// Scalar fields kept packed: 4 bytes a field on the stack (the value) and
/// 4 bits (what kind of value), instead of a [`ScalarField`]'s 12; the
/// names stay in flash. What [`ScalarSet::get`] gives back is what a
/// [`ScalarField`] of that name would hold.
pub struct ScalarSet<'a> {
    names: &'static [[u8; SCALAR_NAME_MAX]],
    /// Where the values of an array field go (the caller's: the last array
    /// read, whichever its field).
    array: Option<&'a mut [u32; ARRAY_MAX]>,
    /// By the index of the name: the integer, or an array's length.
    values: [u32; SET_MAX],
    /// Bit `i`: the field was present.
    seen: u16,
    /// Bit `i`: its value was `true`.
    trues: u16,
    /// Bit `i`: its value was a non-negative integer.
    uints: u16,
    /// Bit `i`: its value was an array.
    arrays: u16,
}

impl<'a> ScalarSet<'a> {
    /// The fields called `names` (see [`scalar_name`]; the first
    /// [`SET_MAX`]), absent until read; array values go to `array`.
    pub const fn new(
        names: &'static [[u8; SCALAR_NAME_MAX]],
        array: Option<&'a mut [u32; ARRAY_MAX]>,
    ) -> Self {
        Self {
            names,
            array,
            values: [0; SET_MAX],
            seen: 0,
            trues: 0,
            uints: 0,
            arrays: 0,
        }
    }

    /// Where array values went.
    pub fn array_mut(&mut self) -> Option<&mut [u32; ARRAY_MAX]> {
        self.array.as_deref_mut()
    }

    /// The same, taken out (the set can be read while it is written).
    pub fn take_array(&mut self) -> Option<&'a mut [u32; ARRAY_MAX]> {
        self.array.take()
    }

    pub(super) fn clear(&mut self) {
        self.values = [0; SET_MAX];
        self.seen = 0;
        self.trues = 0;
        self.uints = 0;
        self.arrays = 0;
    }

    /// Records `v` for the field called `name`, if it is one of them (the
    /// last occurrence wins, as with a [`ScalarField`]).
    // Out of line: a field not in the caller's slices is rare, and its
    // locals stay out of the parse's frame.
    // (The name as [`padded`] gives it and the value packed: all in
    // registers.)
    #[inline(never)] // stack: see docs/STACK.md
    pub(super) fn set(&mut self, key: u32, v: Packed<Result<Scalar, Bad>>) {
        let v: Scalar = v.get().unwrap_or(Scalar::Absent);
        let Some(i) = self
            .names
            .iter()
            .position(|n| key != 0 && u32::from_le_bytes(*n) == key)
        else {
            return;
        };
        let Some(slot) = self.values.get_mut(i) else {
            return;
        };
        let bit = 1u16 << i;
        self.seen |= bit;
        self.trues &= !bit;
        self.uints &= !bit;
        self.arrays &= !bit;
        *slot = match v {
            Scalar::True => {
                self.trues |= bit;
                0
            }
            Scalar::Uint(x) => {
                self.uints |= bit;
                x
            }
            Scalar::Array(n) => {
                self.arrays |= bit;
                u32::from(n)
            }
            Scalar::Absent | Scalar::Other => 0,
        };
    }

    /// The value of the field `names[i]`.
    pub fn get(&self, i: usize) -> Scalar {
        if !self.present(i) {
            Scalar::Absent
        } else if self.is_true(i) {
            Scalar::True
        } else if let Some(n) = self.array_len(i) {
            Scalar::Array(n)
        } else if self.uints & self.bit(i) != 0 {
            Scalar::Uint(self.uint(i))
        } else {
            Scalar::Other
        }
    }

    fn bit(&self, i: usize) -> u16 {
        if i < SET_MAX { 1 << i } else { 0 }
    }

    /// Whether the field `names[i]` was present.
    pub fn present(&self, i: usize) -> bool {
        self.seen & self.bit(i) != 0
    }

    /// Whether its value is `true`.
    pub fn is_true(&self, i: usize) -> bool {
        self.trues & self.bit(i) != 0
    }

    /// Its value as [`Scalar::uint`] gives it (0 when absent or not an
    /// integer).
    pub fn uint(&self, i: usize) -> u32 {
        match self.values.get(i) {
            Some(&v) if self.uints & self.bit(i) != 0 => v,
            _ => 0,
        }
    }

    /// Its array's length when its value is an array.
    pub fn array_len(&self, i: usize) -> Option<u8> {
        match self.values.get(i) {
            Some(&v) if self.arrays & self.bit(i) != 0 => Some(v as u8),
            _ => None,
        }
    }
}

impl Tagged for Scalar {
    #[inline(always)] // stack: see docs/STACK.md
    fn tag(self) -> (u32, u32) {
        match self {
            Scalar::Absent => (1, 0),
            Scalar::True => (2, 0),
            Scalar::Other => (3, 0),
            Scalar::Uint(x) => (4, x),
            Scalar::Array(n) => (5, u32::from(n)),
        }
    }
    #[inline(always)] // stack: see docs/STACK.md
    fn untag(tag: u32, low: u32) -> Self {
        match tag {
            2 => Scalar::True,
            3 => Scalar::Other,
            4 => Scalar::Uint(low),
            5 => Scalar::Array(low as u8),
            _ => Scalar::Absent,
        }
    }
}
