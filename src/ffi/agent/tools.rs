//! Status texts, `claw_agent_init`, the C tool tables and the tool
//! registry, `execute()` and `tool()` from the REPL.

use super::*;

/// The exact message of a status (UTF-8, NUL-terminated, static).
#[unsafe(no_mangle)]
pub extern "C" fn claw_status_text(status: claw_status_t) -> *const c_char {
    Status::from_c(status).c_text().as_ptr()
}

/// Whether the binding puts the argument's name before the text
/// ("key must not contain NUL").
#[unsafe(no_mangle)]
pub extern "C" fn claw_status_named(status: claw_status_t) -> bool {
    Status::from_c(status).named()
}

/// Which exception a status is (`CLAW_KIND_*`).
#[unsafe(no_mangle)]
pub extern "C" fn claw_status_kind(status: claw_status_t) -> u8 {
    Status::from_c(status).kind() as u8
}

/// Once per soft reset, after the three seed `_init` calls: the agent's
/// state afresh, the registry's defaults and limits, and the C tools of
/// every table `claw_tools_register` was given (since the hard boot).
/// Fails (false) only when called reentrantly.
#[unsafe(no_mangle)]
pub extern "C" fn claw_agent_init() -> bool {
    with_state(false, |s, p| {
        s.agent.reset();
        let now = crate::port::Port::ticks_ms(p);
        s.registry.reset(&mut s.rate, now);
        let tables = p.tools.tables;
        for (table, n) in tables {
            // SAFETY: the table was checked when it was registered (or is
            // NULL), and its contract makes it const data that lives as
            // long as the firmware.
            for d in unsafe { def_slice(table, n) } {
                // SAFETY: as above: checked, static.
                let _ = unsafe { add_def(s, p, d) };
            }
        }
        true
    })
}

/// The tables of C tools (`claw_tools_register`), kept across soft resets:
/// they are the firmware's const data.
pub struct CTools {
    tables: [(*const claw_tool_def_t, usize); CLAW_TOOL_TABLES],
}

/// How many tables `claw_tools_register` keeps.
pub const CLAW_TOOL_TABLES: usize = 4;

impl CTools {
    pub(crate) const fn new() -> Self {
        Self {
            tables: [(core::ptr::null(), 0); CLAW_TOOL_TABLES],
        }
    }

    fn tables(&self) -> impl Iterator<Item = (*const claw_tool_def_t, usize)> + '_ {
        self.tables.iter().copied().filter(|(t, _)| !t.is_null())
    }

    /// The def of the tool called `name`, from the table registered first
    /// that has one (the firmware's, registered at boot, before the
    /// binding's fallbacks).
    pub(super) fn find(&self, name: &[u8]) -> Option<*const claw_tool_def_t> {
        for &(table, n) in self.tables.iter() {
            // SAFETY: checked at registration (or NULL); static.
            for d in unsafe { def_slice(table, n) } {
                // SAFETY: checked at registration: a NUL-terminated name.
                if unsafe { c_bytes(d.name) } == Some(name) {
                    return Some(d);
                }
            }
        }
        None
    }
}

/// The defs of a registered table.
///
/// # Safety
/// `table` is valid for reads of `n` elements for the rest of the program.
unsafe fn def_slice(table: *const claw_tool_def_t, n: usize) -> &'static [claw_tool_def_t] {
    if table.is_null() {
        return &[];
    }
    // SAFETY: per this function's contract.
    unsafe { core::slice::from_raw_parts(table, n) }
}

/// Whether `d` is a def the registry takes: a valid name, a handler, a
/// risk of 0..=2, a description of at most 127 bytes of UTF-8.
///
/// # Safety
/// `d`'s strings are NULL or NUL-terminated.
unsafe fn def_ok(d: &claw_tool_def_t) -> Result<(), Status> {
    // SAFETY: per this function's contract.
    let name = unsafe { c_bytes(d.name) }.ok_or(Status::ToolName)?;
    agent::check_tool_name(name)?;
    if d.handler.is_none() {
        return Err(Status::NoHandler);
    }
    if d.risk > crate::safety::trust::RISK_HIGH {
        return Err(Status::Risk);
    }
    // SAFETY: per this function's contract.
    if let Some(desc) = unsafe { c_bytes(d.description) } {
        agent::check_text(desc)?;
        if desc.len() > DESCRIPTION_MAX {
            return Err(Status::Description);
        }
    }
    Ok(())
}

/// Longest description of a registered tool, in bytes.
pub const CLAW_TOOL_DESCRIPTION_MAX: usize = 127;
const DESCRIPTION_MAX: usize = CLAW_TOOL_DESCRIPTION_MAX;

/// Registers the tool `d` describes.
///
/// # Safety
/// `d` passed [`def_ok`].
unsafe fn add_def(
    s: &mut State,
    p: &mut crate::ffi::CPort,
    d: &claw_tool_def_t,
) -> Result<usize, Status> {
    // SAFETY: per this function's contract (checked: NUL-terminated).
    let name = unsafe { c_bytes(d.name) }.unwrap_or(&[]);
    let spec = Spec {
        how: How::Host,
        risk: d.risk,
        confirm: d.confirm,
        per_min: d.rate_per_min,
    };
    agent::register_tool(s, p, name, spec)
}

/// Registers the firmware's (or the binding's) C tools: `defs[0..n)`,
/// const data that lives as long as the firmware (the table is kept, not
/// copied, and applied again by every `claw_agent_init`). A name of the
/// default registry (`gpio_set`, `fs_read`, ...) gives that tool its
/// handler and keeps its description, risk, flag and limit; another name
/// takes a spare slot with the def's. A name in two tables runs the
/// handler of the table registered first (register the firmware's before
/// MicroPython starts: the binding registers its own at its first call).
/// Every def is checked first: one bad def registers nothing. Registering
/// the same table again changes nothing. Returns the number of tools
/// registered, or `-claw_status_t`.
///
/// # Safety
/// `defs` is NULL or valid for reads of `n` elements for the rest of the
/// program, its strings NULL or NUL-terminated and unchanging.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tools_register(defs: *const claw_tool_def_t, n: usize) -> i32 {
    if defs.is_null() || n == 0 || n > 64 {
        return -(Status::ToolName as i32);
    }
    // SAFETY: per this function's contract.
    let table = unsafe { def_slice(defs, n) };
    for d in table {
        // SAFETY: per this function's contract.
        if let Err(e) = unsafe { def_ok(d) } {
            return -(e as i32);
        }
    }
    let r = with_state(Err(Status::Busy), |s, p| {
        if !p.tools.tables().any(|(t, _)| t == defs) {
            let free = p.tools.tables.iter_mut().find(|(t, _)| t.is_null());
            match free {
                Some(slot) => *slot = (defs, n),
                None => return Err(Status::RegistryFull),
            }
        }
        let mut count = 0i32;
        for d in table {
            // SAFETY: checked above.
            unsafe { add_def(s, p, d) }?;
            count += 1;
        }
        Ok(count)
    });
    match r {
        Ok(n) => n,
        Err(e) => -(e as i32),
    }
}

/// The def of the C tool in `slot` (for the host, which runs it), or NULL
/// when the slot holds no C tool.
#[unsafe(no_mangle)]
pub extern "C" fn claw_tool_def(slot: u8) -> *const claw_tool_def_t {
    with_state(core::ptr::null(), |s, p| {
        let slot = usize::from(slot);
        if s.registry.how(slot) != How::Host {
            return core::ptr::null();
        }
        p.tools.find(s.rate.name(slot)).unwrap_or(core::ptr::null())
    })
}

/// Registers a host tool (`register_tool()`): `name[0..len)`, risk 0..=2,
/// `rate_per_min` 0 for the default, and whether a model's request of it
/// waits for the person at the device. Returns its slot or
/// `-claw_status_t`. Re-registering a name keeps its rate window.
///
/// # Safety
/// `name` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tool_register(
    name: *const u8,
    len: usize,
    risk: u8,
    rate_per_min: u16,
    confirm: bool,
) -> i32 {
    // SAFETY: per this function's contract.
    let Some(name) = (unsafe { bytes(name, len) }) else {
        return -(Status::ToolName as i32);
    };
    let r = with_state(Err(Status::Busy), |s, p| {
        let spec = Spec {
            how: How::Python,
            risk,
            confirm,
            per_min: rate_per_min,
        };
        agent::register_tool(s, p, name, spec)
    });
    match r {
        Ok(slot) => slot as i32,
        Err(e) => -(e as i32),
    }
}

/// Drops every Python tool (a new VM: their callables are gone).
#[unsafe(no_mangle)]
pub extern "C" fn claw_tools_drop_python() {
    with_state((), |s, _| s.registry.drop_python(&mut s.rate));
}

/// The registry entry in `slot` (0..CLAW_RATE_MAX_TOOLS). False when the
/// slot holds no tool.
///
/// # Safety
/// `out` is NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tool_info(slot: u8, out: *mut claw_tool_info_t) -> bool {
    if out.is_null() {
        return false;
    }
    let info = with_state(None, |s, p| {
        let t = s.registry.tool(&s.rate, usize::from(slot))?;
        let description = match (t.description, t.how) {
            (Some(d), _) => d.as_ptr(),
            (None, How::Host) => p
                .tools
                .find(t.name)
                // SAFETY: checked at registration; static.
                .map_or(core::ptr::null(), |d| unsafe { (*d).description }),
            _ => core::ptr::null(),
        };
        let mut v = claw_tool_info_t {
            name: [0; 32],
            risk: t.risk,
            rate_per_min: t.limit,
            builtin: t.how != How::Python,
            confirm: t.confirm,
            how: t.how as u8,
            description,
        };
        put_cstr(&mut v.name, t.name);
        Some(v)
    });
    match info {
        Some(v) => {
            // SAFETY: non-NULL and valid for one element per the contract.
            unsafe { out.write(v) };
            true
        }
        None => false,
    }
}

/// `execute(name, params)`, the vendor's: gates, recorded, a TOOL turn
/// "execute: NAME"; the tool does not run. `*risk` and `*confirm` are the
/// tool's.
///
/// # Safety
/// `name` valid for `name_len` bytes; `risk` and `confirm` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_execute(
    name: *const u8,
    name_len: usize,
    risk: *mut u8,
    confirm: *mut bool,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let Some(name) = (unsafe { bytes(name, name_len) }) else {
        return Status::ToolName as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    let r = agent::execute(&mut host, name);
    if let Ok((r_risk, r_confirm)) = r {
        if !risk.is_null() {
            // SAFETY: non-NULL and valid per the contract.
            unsafe { risk.write(r_risk) };
        }
        if !confirm.is_null() {
            // SAFETY: non-NULL and valid per the contract.
            unsafe { confirm.write(r_confirm) };
        }
    }
    done(r.map(|_| ()))
}

/// `tool(name, arg)` from the REPL: the tool runs at the current trust
/// level (never above the chain's). `arg_kind` is a `CLAW_ARG_*`; a text
/// argument is `arg[0..arg_len)`, a bool or int `arg_int`. The result's
/// text goes to `out[0..out_max)`, its kind to `*value`.
///
/// # Safety
/// `name` valid for `name_len` bytes, `arg` NULL or valid for `arg_len`
/// bytes, `out` valid for writes of `out_max` bytes, `value` NULL or valid
/// for one element; `ctx` is passed to `claw_port_tool` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tool(
    name: *const u8,
    name_len: usize,
    arg_kind: u8,
    arg: *const u8,
    arg_len: usize,
    arg_int: i32,
    ctx: *mut c_void,
    out: *mut u8,
    out_max: usize,
    value: *mut claw_value_t,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(name), Some(text), Some(out)) = (
        unsafe { bytes(name, name_len) },
        unsafe { bytes(arg, arg_len) },
        unsafe { out_slice(out.cast(), out_max) },
    ) else {
        return Status::ToolName as claw_status_t;
    };
    let arg = match arg_kind {
        CLAW_ARG_TEXT => Arg::Text(text),
        CLAW_ARG_BOOL => Arg::Bool(arg_int != 0),
        CLAW_ARG_INT => Arg::Int(arg_int),
        CLAW_ARG_OTHER => Arg::Other,
        _ => Arg::None,
    };
    let mut host = CHost::new(ctx);
    let mut acct = agent::Account::new();
    let r = agent::tool(&mut host, name, Origin::Repl, arg, out, &mut acct);
    // SAFETY: per this function's contract.
    unsafe { put_value(value, &r, &acct) };
    done(r.map(|_| ()))
}
