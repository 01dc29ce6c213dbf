//! Any bytes as `/.bentoclaw_memory`: reading never fails or panics; a set
//! keeps every pair that was readable (last duplicate wins) and the file it
//! writes holds each key once.
#![no_main]

use std::collections::BTreeMap;

use bentoclaw::memory;
use bentoclaw::port::MEMORY_PATH;
use bentoclaw::testing::MemPort;
use libfuzzer_sys::fuzz_target;

fn pairs(port: &mut MemPort) -> (BTreeMap<Vec<u8>, Vec<u8>>, usize) {
    let mut map = BTreeMap::new();
    let mut lines = 0;
    memory::for_each(port, &mut |p| {
        lines += 1;
        map.insert(p.key().to_vec(), p.value().to_vec());
    })
    .unwrap();
    (map, lines)
}

fuzz_target!(|data: &[u8]| {
    let mut port = MemPort::new();
    port.put(MEMORY_PATH, data);
    let (mut before, _) = pairs(&mut port);
    for (k, v) in &before {
        let mut out = [0u8; 128];
        let n = memory::get(&mut port, k, &mut out).unwrap();
        assert_eq!(&out[..n], &v[..]);
    }
    let res = memory::set(&mut port, b"fuzz-key", "ค่า".as_bytes());
    if before.len() < 32 || before.contains_key(&b"fuzz-key"[..]) {
        res.unwrap();
        before.insert(b"fuzz-key".to_vec(), "ค่า".as_bytes().to_vec());
        let (after, lines) = pairs(&mut port);
        assert_eq!(after, before);
        assert_eq!(lines, after.len(), "each key written once");
    } else {
        assert!(res.is_err());
        assert_eq!(port.get(MEMORY_PATH).unwrap(), data);
    }
});
