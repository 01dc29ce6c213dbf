//! Any bytes as `/.bentoclaw_session`: loading never fails or panics, every
//! loaded message is valid UTF-8 within the limits, and after one more
//! message and a flush the file reads back as exactly the ring in RAM.
#![no_main]

use bentoclaw::message::Role;
use bentoclaw::port::SESSION_PATH;
use bentoclaw::session::Session;
use bentoclaw::testing::MemPort;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut port = MemPort::new();
    port.put(SESSION_PATH, data);
    let mut s = Session::new();
    let ring = s.ring(&mut port);
    assert!(ring.len() <= 10);
    for m in ring.iter() {
        assert!(m.text.len() <= 255);
        assert!(core::str::from_utf8(&m.text).is_ok());
    }
    s.add(&mut port, Role::User, "ต่อ".as_bytes()).unwrap();
    s.flush(&mut port).unwrap();
    let before: Vec<_> = s.ring(&mut port).iter().cloned().collect();
    let mut again = Session::new();
    let after: Vec<_> = again.ring(&mut port).iter().cloned().collect();
    assert_eq!(before, after);
});
