//! Random sequences of session and memory operations, with injected faults
//! and reboots, against a plain model: what is on flash after a reboot is
//! always the last successfully flushed ring and the last successfully set
//! pairs.
#![no_main]

use std::collections::{BTreeMap, VecDeque};

use bentoclaw::memory;
use bentoclaw::message::Role;
use bentoclaw::port::Errno;
use bentoclaw::session::Session;
use bentoclaw::testing::{MemPort, Op};
use libfuzzer_sys::fuzz_target;

fn cut(s: &[u8], max: usize) -> Vec<u8> {
    let mut end = s.len().min(max);
    while end > 0 && end < s.len() && (s[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    s[..end].to_vec()
}

fuzz_target!(|data: &[u8]| {
    let mut port = MemPort::new();
    let mut s = Session::new();
    let mut ring: VecDeque<Vec<u8>> = VecDeque::new();
    let mut flushed: VecDeque<Vec<u8>> = VecDeque::new();
    let mut mem: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut it = data.chunks(3);
    while let Some(op) = it.next() {
        let (a, b) = (
            op.get(1).copied().unwrap_or(0),
            op.get(2).copied().unwrap_or(0),
        );
        match op[0] % 7 {
            0 => {
                let text = "ข้อความ".repeat(usize::from(a) % 40) + &b.to_string();
                if s.add(&mut port, Role::User, text.as_bytes()).is_ok() {
                    ring.push_back(cut(text.as_bytes(), 255));
                    if ring.len() > 10 {
                        ring.pop_front();
                    }
                }
            }
            1 => {
                if s.flush(&mut port).is_ok() {
                    flushed = ring.clone();
                }
            }
            2 => {
                let kinds = [Op::Open, Op::Write, Op::Close, Op::Remove, Op::Rename];
                port.fail(kinds[usize::from(a) % 5], u32::from(b % 4), Errno::EIO);
            }
            3 => {
                port.heal();
                s = Session::new();
                let got: VecDeque<Vec<u8>> =
                    s.ring(&mut port).iter().map(|m| m.text.to_vec()).collect();
                assert_eq!(got, flushed, "reboot reads the last flushed ring");
                ring = flushed.clone();
            }
            4 => {
                let key = format!("k{}", a % 40);
                let value = "v".repeat(usize::from(b) % 130);
                let ok = memory::set(&mut port, key.as_bytes(), value.as_bytes()).is_ok();
                if ok {
                    mem.insert(key.into_bytes(), value.into_bytes());
                }
            }
            5 => {
                port.heal();
                let mut got = BTreeMap::new();
                memory::for_each(&mut port, &mut |p| {
                    got.insert(p.key().to_vec(), p.value().to_vec());
                })
                .unwrap();
                assert_eq!(got, mem, "memory is exactly the successful sets");
            }
            _ => {
                s.clear(&mut port);
                ring.clear();
                if !s.is_dirty() {
                    flushed.clear();
                }
            }
        }
    }
});
