//! Memory backends: the z/VM CMM balloon (/proc/sys/vm/cmm_pages, in 4 KiB pages) and sysfs
//! memory blocks (/sys/devices/system/memory/memoryN/state, one block per step, ZONE_MOVABLE
//! first). Both change the machine only through the Guard, so exit and recovery restore them.

use racehorse_machine::{Guard, MachineError, SysRoot};
use std::path::PathBuf;

/// Pages of 4 KiB, the unit of CMM_MIN, CMM_MAX and cmm_pages.
pub const PAGE: u64 = 4096;

/// The CMM balloon: pages given to the hypervisor.
pub struct CmmPages {
    pub root: SysRoot,
}

impl CmmPages {
    pub fn file(root: &SysRoot) -> PathBuf {
        root.proc("sys/vm/cmm_pages")
    }
    pub fn available(root: &SysRoot) -> bool {
        Self::file(root).is_file()
    }
    pub fn pages(&self) -> Result<u64, MachineError> {
        let f = Self::file(&self.root);
        let t = std::fs::read_to_string(&f).map_err(|e| MachineError::io(&f, e))?;
        t.trim()
            .parse()
            .map_err(|_| MachineError::parse("cmm_pages", 1, format!("not a number: {:?}", t.trim())))
    }
    pub fn set(&self, g: &mut Guard, pages: u64) -> Result<(), MachineError> {
        g.set_sysctl("vm.cmm_pages", &pages.to_string())
    }
}

/// Memory blocks taken offline by the daemon (the "balloon" is their size).
pub struct MemBlocks {
    pub root: SysRoot,
    /// Pages per block.
    pub block_pages: u64,
    /// Blocks offlined, in order (the last is onlined first).
    pub taken: Vec<u32>,
}

impl MemBlocks {
    pub fn new(root: &SysRoot) -> Result<MemBlocks, MachineError> {
        let f = root.sys("devices/system/memory/block_size_bytes");
        let t = std::fs::read_to_string(&f).map_err(|e| MachineError::io(&f, e))?;
        let bytes = u64::from_str_radix(t.trim().trim_start_matches("0x"), 16)
            .map_err(|_| MachineError::parse("block_size_bytes", 1, format!("not hex: {:?}", t.trim())))?;
        Ok(MemBlocks { root: root.clone(), block_pages: (bytes / PAGE).max(1), taken: Vec::new() })
    }

    pub fn pages(&self) -> u64 {
        self.taken.len() as u64 * self.block_pages
    }

    fn state_file(&self, block: u32) -> PathBuf {
        self.root.sys(format!("devices/system/memory/memory{block}/state"))
    }

    /// Online blocks that may go offline, ZONE_MOVABLE ones first, then highest first.
    fn candidates(&self) -> Vec<u32> {
        let dir = self.root.sys("devices/system/memory");
        let mut blocks: Vec<(bool, u32)> = std::fs::read_dir(&dir)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().to_str()?.strip_prefix("memory")?.parse().ok())
                    .collect()
            })
            .unwrap_or_else(|_| Vec::new())
            .into_iter()
            .filter(|&b: &u32| {
                let read =
                    |f: &str| std::fs::read_to_string(dir.join(format!("memory{b}/{f}"))).unwrap_or_default();
                read("state").trim() == "online" && read("removable").trim() != "0"
            })
            .map(|b| {
                let zones =
                    std::fs::read_to_string(dir.join(format!("memory{b}/valid_zones"))).unwrap_or_default();
                (!zones.contains("Movable"), b)
            })
            .collect();
        blocks.sort_by_key(|&(not_movable, b)| (not_movable, std::cmp::Reverse(b)));
        blocks.into_iter().map(|(_, b)| b).collect()
    }

    /// Offlines one block (trying the next when the kernel refuses one); Ok(None) when none could go.
    pub fn offline_one(
        &mut self,
        g: &mut Guard,
        log: &mut dyn FnMut(String),
    ) -> Result<Option<u32>, MachineError> {
        for b in self.candidates() {
            match g.set_files(&[(self.state_file(b), "offline".into())]) {
                Ok(()) => {
                    self.taken.push(b);
                    return Ok(Some(b));
                }
                Err(e) => log(format!("memory{b}: {e}; trying the next block")),
            }
        }
        Ok(None)
    }

    /// Onlines the block taken last.
    pub fn online_one(&mut self, g: &mut Guard) -> Result<Option<u32>, MachineError> {
        let Some(&b) = self.taken.last() else { return Ok(None) };
        g.set_files(&[(self.state_file(b), "online".into())])?;
        self.taken.pop();
        Ok(Some(b))
    }
}
