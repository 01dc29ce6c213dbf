//! The tool registry (feature `agent`): which tools this board has, how
//! each one runs, and what `tools()`, `execute()`, TACP TOOLS and the
//! gates read of it.
//!
//! The board's default registry is the vendor's (`s_tools[]` of the BENTO
//! firmware's binding): [`DEFS`] holds its 32 names — 29 on every board, 3
//! behind BSP options — with their descriptions, risks, `confirm` flags
//! and per-minute limits, then the library's own four built-ins. Each has
//! a slot of its own in the rate table ([`crate::safety::rate::KNOWN`], the
//! same order). Beside them, [`crate::safety::rate::SPARE`] slots take the
//! tools the firmware or a script registers under other names.
//!
//! How a tool runs ([`How`]):
//! * [`How::Builtin`]: by the library itself (`echo`, `uptime`, `led`,
//!   `wipe_memory`, and the vendor's `ui_notify`, a UI event);
//! * [`How::Host`]: by a C handler the host registered
//!   (`claw_tools_register`: the binding's MicroPython tools such as
//!   `fs_read` or `py_exec`, the firmware's hardware tools such as
//!   `gpio_set`), run through the host's tool port;
//! * [`How::Python`]: by a Python callable (`register_tool`), run through
//!   the same port.
//!
//! A vendor tool no handler was registered for is absent: not listed, and
//! an unknown tool to `execute()`. A handler registered under a vendor
//! name runs with the vendor's risk, `confirm` flag, limit and description:
//! the registry is the board's contract with the IDE and the model, and a
//! handler cannot lower a tool's risk.

use core::ffi::CStr;

use crate::safety::rate::{KNOWN, MAX_TOOLS, RateTable, SPARE, VENDOR_TOOLS};
use crate::safety::trust::RISK_HIGH;

/// A tool of the default registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Def {
    /// Its name (the rate table's [`KNOWN`] at the same index).
    pub name: &'static str,
    /// What `tools()` and TACP TOOLS say it does.
    pub description: &'static CStr,
    /// 0 low, 1 medium, 2 high.
    pub risk: u8,
    /// The person at the device confirms it before a model's request runs.
    pub confirm: bool,
    /// Calls per minute.
    pub rate_per_min: u16,
}

const fn def(
    name: &'static str,
    description: &'static CStr,
    risk: u8,
    confirm: bool,
    rate_per_min: u16,
) -> Def {
    Def {
        name,
        description,
        risk,
        confirm,
        rate_per_min,
    }
}

/// The default registry: the vendor's tools in the vendor's order, then the
/// library's built-ins (extensions).
pub const DEFS: [Def; KNOWN.len()] = [
    def("gpio_set", c"Set LED on/off", 1, false, 30),
    def("gpio_read", c"Read LED + button state", 0, false, 60),
    def("sensor_read_all", c"Read all sensors", 0, false, 30),
    def("lcd_console", c"Print text to LCD (Thai+EN)", 1, false, 20),
    def("ui_notify", c"Show notification on screen", 1, false, 10),
    def("wifi_status", c"Get WiFi connection info", 0, false, 10),
    def("trustm_info", c"Read OPTIGA Trust M info", 0, false, 5),
    def("trustm_sign", c"ECDSA sign with Trust M", 2, true, 2),
    def("joystick_read", c"Read joystick state", 0, false, 60),
    def("rule_set", c"Create automation rule", 2, true, 5),
    def("rule_clear", c"Clear automation rules", 2, true, 2),
    def("diagnostics_read", c"Read system diagnostics", 0, false, 10),
    def("rtc_read", c"Read current date/time", 0, false, 60),
    def("radar_read", c"Read radar presence + energy", 0, false, 30),
    def("heap_info", c"Read heap memory usage", 0, false, 10),
    def("fs_list", c"List files in directory", 0, false, 10),
    def("fs_stat", c"Check file exists + size", 0, false, 30),
    def("fs_read", c"Read text file content", 0, false, 10),
    def("py_exec", c"Execute MicroPython code", 2, true, 5),
    def("wifi_scan", c"Scan nearby WiFi APs", 0, false, 2),
    def("wifi_ping", c"ICMP ping test", 0, false, 5),
    def(
        "wifi_packet_stats",
        c"WiFi TX/RX packet counters",
        0,
        false,
        10,
    ),
    def("ntp_status", c"NTP time sync status", 0, false, 30),
    def("rtc_set", c"Set RTC date/time", 2, true, 5),
    def("fs_write", c"Write text file to flash", 2, true, 5),
    def("fs_delete", c"Delete file from flash", 2, true, 5),
    def("trustm_random", c"Hardware RNG (OPTIGA TRNG)", 0, false, 10),
    def("trustm_sha256", c"SHA-256 hash (OPTIGA HW)", 0, false, 10),
    def(
        "hard_reset",
        c"Force hardware reset (all cores)",
        2,
        true,
        1,
    ),
    def("safe_boot", c"Soft reset, skip main.py", 2, true, 1),
    def(
        "capsense_read",
        c"Read CapSense buttons + slider",
        0,
        false,
        30,
    ),
    def(
        "potentiometer_read",
        c"Read potentiometer value",
        0,
        false,
        30,
    ),
    // The library's own (extensions of the vendor's registry).
    def("echo", c"Return the argument", 0, false, 10),
    def("uptime", c"Milliseconds since boot", 0, false, 10),
    def("led", c"Read, set or toggle the user LED", 1, false, 10),
    // Destroys what the user asked the device to remember: USB only, and
    // at most twice a minute even there.
    def(
        "wipe_memory",
        c"Forget everything remember() stored",
        2,
        false,
        2,
    ),
];

/// The slot of `ui_notify`, which the library runs itself.
pub const UI_NOTIFY: usize = 4;
/// The slot of the first of the library's built-ins.
pub const FIRST_OWN: usize = VENDOR_TOOLS;

/// How a tool runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum How {
    /// No tool in this slot.
    Absent = 0,
    /// The library runs it.
    Builtin = 1,
    /// A C handler of the host.
    Host = 2,
    /// A Python callable of the host.
    Python = 3,
}

impl How {
    fn from_u8(v: u8) -> How {
        match v {
            1 => How::Builtin,
            2 => How::Host,
            3 => How::Python,
            _ => How::Absent,
        }
    }
}

/// A tool as the registry holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tool<'a> {
    /// Its slot (the rate table's).
    pub slot: usize,
    /// Its name.
    pub name: &'a [u8],
    /// The description, when the library has it (a default tool's); the
    /// host has those of the tools it registered.
    pub description: Option<&'static CStr>,
    /// 0 low, 1 medium, 2 high.
    pub risk: u8,
    /// Needs the person at the device before a model's request runs.
    pub confirm: bool,
    /// Calls per minute.
    pub limit: u16,
    /// How it runs.
    pub how: How,
}

/// The registry's state: how each slot runs, and the risk and `confirm`
/// flag of the tools in spare slots.
pub struct Registry {
    how: [u8; MAX_TOOLS],
    /// Bits 0–1: risk; bit 2: confirm.
    spare: [u8; SPARE],
}

const CONFIRM: u8 = 4;

impl Registry {
    /// No tool at all (all zeros).
    pub const fn new() -> Self {
        Self {
            how: [0; MAX_TOOLS],
            spare: [0; SPARE],
        }
    }

    /// The library's built-ins, and every default tool's limit (what the
    /// vendor's `ensure_init` sets with `claw_rate_set`); every tool the
    /// host registered is gone (it registers them again).
    pub fn reset(&mut self, rate: &mut RateTable, now: u32) {
        self.how = [0; MAX_TOOLS];
        self.spare = [0; SPARE];
        for (slot, d) in DEFS.iter().enumerate() {
            rate.set_slot(slot, d.rate_per_min, now);
            if slot >= FIRST_OWN || slot == UI_NOTIFY {
                self.set_how(slot, How::Builtin);
            }
        }
        // Spare names the rate table kept from before are free again.
        for slot in KNOWN.len()..MAX_TOOLS {
            rate.release(slot);
        }
    }

    fn set_how(&mut self, slot: usize, how: How) {
        if let Some(h) = self.how.get_mut(slot) {
            *h = how as u8;
        }
    }

    /// How `slot` runs.
    pub fn how(&self, slot: usize) -> How {
        How::from_u8(self.how.get(slot).copied().unwrap_or(0))
    }

    /// Adds a tool the host runs (`how` is [`How::Host`] or
    /// [`How::Python`]) under `name`. A default tool's name takes that
    /// tool's slot, risk, flag and limit (`risk`, `confirm` and `per_min`
    /// apply to other names; `per_min` 0: the default). Registering a name
    /// again replaces its handler and keeps its window (no quota refilled).
    pub fn add(
        &mut self,
        rate: &mut RateTable,
        name: &[u8],
        spec: Spec,
        now: u32,
    ) -> Result<usize, AddError> {
        let Spec {
            how,
            risk,
            confirm,
            per_min,
        } = spec;
        if risk > RISK_HIGH {
            return Err(AddError::Risk);
        }
        let slot = match rate.find(name) {
            Some(s) => s,
            None => rate.claim(name).ok_or(AddError::Full)?,
        };
        let held = self.how(slot);
        if held == How::Builtin || (held != How::Absent && held != how) {
            // A script must not swap a built-in (say the high-risk wipe),
            // or the firmware's handler, for something of its own.
            return Err(AddError::Taken);
        }
        self.set_how(slot, how);
        match slot.checked_sub(KNOWN.len()) {
            Some(i) => {
                if let Some(m) = self.spare.get_mut(i) {
                    *m = risk | if confirm { CONFIRM } else { 0 };
                }
                rate.set_slot(slot, per_min, now);
            }
            None => {
                let d = DEFS.get(slot).map_or(0, |d| d.rate_per_min);
                rate.set_slot(slot, d, now);
            }
        }
        Ok(slot)
    }

    /// Drops every Python tool (a new VM: their callables are gone).
    pub fn drop_python(&mut self, rate: &mut RateTable) {
        for slot in 0..MAX_TOOLS {
            if self.how(slot) == How::Python {
                self.set_how(slot, How::Absent);
                if slot >= KNOWN.len() {
                    rate.release(slot);
                }
            }
        }
    }

    /// The tool in `slot`, if there is one.
    pub fn tool<'a>(&self, rate: &'a RateTable, slot: usize) -> Option<Tool<'a>> {
        let how = self.how(slot);
        if how == How::Absent {
            return None;
        }
        let (description, risk, confirm) = match DEFS.get(slot) {
            Some(d) => (Some(d.description), d.risk, d.confirm),
            None => {
                let m = slot
                    .checked_sub(KNOWN.len())
                    .and_then(|i| self.spare.get(i))
                    .copied()
                    .unwrap_or(RISK_HIGH);
                (None, m & 3, m & CONFIRM != 0)
            }
        };
        Some(Tool {
            slot,
            name: rate.name(slot),
            description,
            risk,
            confirm,
            limit: rate.limit(slot),
            how,
        })
    }

    /// The tool called `name`.
    pub fn find<'a>(&self, rate: &'a RateTable, name: &[u8]) -> Option<Tool<'a>> {
        self.tool(rate, rate.find(name)?)
    }

    /// The tools there are, in slot order.
    pub fn iter<'a>(&'a self, rate: &'a RateTable) -> impl Iterator<Item = Tool<'a>> + 'a {
        (0..MAX_TOOLS).filter_map(move |s| self.tool(rate, s))
    }

    /// How many tools there are (`status()["tool_count"]`).
    pub fn count(&self) -> usize {
        self.how.iter().filter(|&&h| h != 0).count()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

/// A tool the host adds ([`Registry::add`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// [`How::Host`] or [`How::Python`].
    pub how: How,
    /// 0 low, 1 medium, 2 high.
    pub risk: u8,
    /// A model's request of it waits for the person at the device.
    pub confirm: bool,
    /// Calls per minute (0: the default).
    pub per_min: u16,
}

/// Why [`Registry::add`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// A risk outside 0..=2.
    Risk,
    /// No slot left (or the name is invalid).
    Full,
    /// A built-in, or a tool of the other kind of handler, has the name.
    Taken,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(how: How, risk: u8, confirm: bool, per_min: u16) -> Spec {
        Spec {
            how,
            risk,
            confirm,
            per_min,
        }
    }

    #[test]
    fn the_defaults_match_the_rate_tables_names() {
        assert_eq!(DEFS.len(), KNOWN.len());
        for (d, k) in DEFS.iter().zip(KNOWN.iter()) {
            assert_eq!(d.name.as_bytes(), *k);
            assert!(d.risk <= RISK_HIGH && d.rate_per_min > 0);
            assert!(d.name.len() <= 31 && d.description.to_bytes().len() < 64);
        }
        // Every confirm tool of the vendor is high risk.
        assert!(DEFS.iter().all(|d| !d.confirm || d.risk == 2));
        assert_eq!(DEFS[UI_NOTIFY].name, "ui_notify");
        assert_eq!(DEFS[FIRST_OWN].name, "echo");
        let names: std::collections::HashSet<_> = DEFS.iter().map(|d| d.name).collect();
        assert_eq!(names.len(), DEFS.len(), "no name twice");
    }

    #[test]
    fn reset_sets_the_vendor_limits_and_the_builtins() {
        let mut rate = RateTable::new();
        let mut r = Registry::new();
        r.reset(&mut rate, 0);
        let listed: Vec<_> = r.iter(&rate).map(|t| t.name.to_vec()).collect();
        assert_eq!(
            listed,
            vec![
                b"ui_notify".to_vec(),
                b"echo".to_vec(),
                b"uptime".to_vec(),
                b"led".to_vec(),
                b"wipe_memory".to_vec()
            ]
        );
        for (slot, d) in DEFS.iter().enumerate() {
            assert_eq!(rate.limit(slot), d.rate_per_min, "{}", d.name);
        }
        assert_eq!(r.count(), 5);
        assert!(r.find(&rate, b"py_exec").is_none(), "absent until provided");
    }

    #[test]
    fn host_tools_take_vendor_slots_and_spares() {
        let mut rate = RateTable::new();
        let mut r = Registry::new();
        r.reset(&mut rate, 0);
        // A handler under a vendor name keeps the vendor's risk and limit.
        let s = r
            .add(&mut rate, b"py_exec", sp(How::Host, 0, false, 99), 0)
            .unwrap();
        let t = r.tool(&rate, s).unwrap();
        assert_eq!((t.risk, t.confirm, t.limit), (2, true, 5));
        assert_eq!(t.description, Some(c"Execute MicroPython code"));
        // A new name takes a spare slot with its own risk, flag and limit.
        let s = r
            .add(&mut rate, b"valve", sp(How::Python, 1, true, 3), 0)
            .unwrap();
        assert!(s >= KNOWN.len());
        let t = r.find(&rate, b"valve").unwrap();
        assert_eq!(
            (t.risk, t.confirm, t.limit, t.how),
            (1, true, 3, How::Python)
        );
        assert_eq!(t.description, None);
        // Built-ins and the other kind of handler are not replaced.
        assert_eq!(
            r.add(&mut rate, b"wipe_memory", sp(How::Python, 0, false, 0), 0),
            Err(AddError::Taken)
        );
        assert_eq!(
            r.add(&mut rate, b"py_exec", sp(How::Python, 0, false, 0), 0),
            Err(AddError::Taken)
        );
        assert_eq!(
            r.add(&mut rate, b"x", sp(How::Python, 3, false, 0), 0),
            Err(AddError::Risk)
        );
        // Re-registering keeps the slot.
        assert_eq!(
            r.add(&mut rate, b"valve", sp(How::Python, 0, false, 0), 0),
            Ok(s)
        );
        // Spares run out: refused, never unlimited.
        let mut n = 1;
        while r
            .add(
                &mut rate,
                format!("t{n}").as_bytes(),
                sp(How::Python, 0, false, 0),
                0,
            )
            .is_ok()
        {
            n += 1;
        }
        assert_eq!(n, SPARE);
        r.drop_python(&mut rate);
        assert!(r.find(&rate, b"valve").is_none());
        assert!(r.find(&rate, b"py_exec").is_some(), "host C tools stay");
        assert!(
            r.add(&mut rate, b"again", sp(How::Python, 0, false, 0), 0)
                .is_ok()
        );
    }
}
