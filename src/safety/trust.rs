//! Transport trust: who may ask for which tool risk.

/// `claw_trust_level_t` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Level {
    /// Nothing is allowed.
    None = 0,
    /// A remote model over HTTPS: low and medium risk.
    Https = 1,
    /// The person at the USB port: every risk.
    Usb = 2,
}

impl Level {
    /// The lower of two levels: authority never rises along a call chain.
    pub fn min(self, other: Level) -> Level {
        if (self as u8) <= (other as u8) {
            self
        } else {
            other
        }
    }

    /// Gate 2 at this level: may a tool of `risk` run? Unknown risks fail
    /// closed.
    pub fn allows(self, risk: u8) -> bool {
        let max = match self {
            Level::None => return false,
            Level::Https => RISK_MEDIUM,
            Level::Usb => RISK_HIGH,
        };
        risk <= max
    }

    /// An unknown level fails closed.
    pub fn from_c(v: u8) -> Level {
        match v {
            1 => Level::Https,
            2 => Level::Usb,
            _ => Level::None,
        }
    }
}

/// Highest risk over HTTPS.
pub(crate) const RISK_MEDIUM: u8 = 1;
/// Highest risk over USB.
pub(crate) const RISK_HIGH: u8 = 2;

/// The current level; it rests at USB.
///
/// Stored as `level ^ USB`, so that the resting level is the all-zero bit
/// pattern: the library's whole state then starts as zeros and lives in
/// `.bss`. (With one non-zero byte it would be `.data`, and its 3.5 KB
/// initial image would be stored in flash.)
#[derive(Clone, Copy, Debug)]
pub struct Trust {
    code: u8,
}

impl Trust {
    /// At rest: USB.
    pub const fn new() -> Self {
        Self { code: 0 }
    }

    /// Sets the level (`claw_trust_set`).
    pub fn set(&mut self, level: Level) {
        self.code = level as u8 ^ Level::Usb as u8;
    }

    /// The level (`claw_trust_get`).
    pub fn get(&self) -> Level {
        Level::from_c(self.code ^ Level::Usb as u8)
    }

    /// Gate 2: may a tool of `risk` run? Unknown risks fail closed.
    pub fn allows(&self, risk: u8) -> bool {
        self.get().allows(risk)
    }
}

impl Default for Trust {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix() {
        let mut t = Trust::new();
        assert_eq!(t.get(), Level::Usb);
        let expect = [
            (0u8, [false, false, false, false]),
            (1, [true, true, false, false]),
            (2, [true, true, true, false]),
            (7, [false, false, false, false]),
            (255, [false, false, false, false]),
        ];
        for (level, allowed) in expect {
            t.set(Level::from_c(level));
            for (risk, &ok) in allowed.iter().enumerate() {
                assert_eq!(t.allows(risk as u8), ok, "level {level} risk {risk}");
            }
            assert!(!t.allows(255));
        }
    }
}
