//! Disk tasks in the style of AIM's disk1.c: files of `disk_blocks` 1 KiB blocks written,
//! read or copied sequentially, or read and written at random block offsets; the sync_*
//! tasks open their output O_SYNC and, as AIM does, move half as many blocks. Reads go to
//! the load point's shared file; writes go to temporary files in the user's directory,
//! removed at the end of the task. (AIM's extra `sync` command between phases is left out,
//! as re-aim's `-y` does.)

use super::{ioe, TaskEnv};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const BLOCK: usize = 1024;
const BIG_BLOCK: usize = 4096;

/// The files disk_src searches through (created with the shared file).
pub const SRC_FILES: usize = 100;

/// Creates the load point's shared files: `path` of `blocks` KiB and the disk_src directory.
pub fn create_shared(path: &Path, blocks: u64) -> std::io::Result<()> {
    let mut f = File::create(path)?;
    let mut block = [0u8; BLOCK];
    for i in 0..blocks {
        block[..8].copy_from_slice(&i.to_le_bytes());
        f.write_all(&block)?;
    }
    f.sync_all()?;
    let src = src_dir(path);
    std::fs::create_dir_all(&src)?;
    for i in 0..SRC_FILES {
        let ext = if i % 2 == 0 { "c" } else { "h" };
        std::fs::write(src.join(format!("file{i:03}.{ext}")), format!("/* file {i} */\n"))?;
    }
    Ok(())
}

fn src_dir(shared: &Path) -> PathBuf {
    shared.with_extension("src")
}

fn temp(env: &TaskEnv, name: &str) -> PathBuf {
    env.dir.join(name)
}

fn open_out(path: &Path, sync: bool) -> Result<File, String> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(true);
    if sync {
        o.custom_flags(libc::O_SYNC);
    }
    o.open(path).map_err(ioe("create"))
}

/// Writes `blocks` blocks of `size` bytes sequentially.
fn write_seq(f: &mut File, blocks: u64, size: usize) -> Result<(), String> {
    let buf = vec![0x5au8; size];
    for _ in 0..blocks {
        f.write_all(&buf).map_err(ioe("write"))?;
    }
    Ok(())
}

/// `count` writes of `size` bytes at random block offsets below `blocks`.
fn write_random(env: &mut TaskEnv, f: &File, blocks: u64, count: u64, size: usize) -> Result<(), String> {
    let buf = vec![0xa5u8; size];
    for _ in 0..count {
        let off = env.rng.below_mod(blocks) * size as u64;
        f.write_all_at(&buf, off).map_err(ioe("write"))?;
    }
    Ok(())
}

fn finish(env: &mut TaskEnv, path: &Path, moved: u64) -> Result<(), String> {
    env.sink = env.sink.wrapping_add(moved);
    std::fs::remove_file(path).map_err(ioe("unlink"))
}

pub fn disk_wrt(env: &mut TaskEnv) -> Result<(), String> {
    let path = temp(env, "disk_wrt");
    write_seq(&mut open_out(&path, false)?, env.disk_blocks, BLOCK)?;
    finish(env, &path, env.disk_blocks)
}

pub fn disk_rd(env: &mut TaskEnv) -> Result<(), String> {
    let mut f = File::open(&env.shared_file).map_err(ioe("open the shared file"))?;
    let mut buf = [0u8; BLOCK];
    let mut n = 0u64;
    loop {
        let got = f.read(&mut buf).map_err(ioe("read"))?;
        if got == 0 {
            break;
        }
        n += got as u64;
    }
    env.sink = env.sink.wrapping_add(n);
    Ok(())
}

pub fn disk_rr(env: &mut TaskEnv) -> Result<(), String> {
    let f = File::open(&env.shared_file).map_err(ioe("open the shared file"))?;
    let mut buf = [0u8; BLOCK];
    for _ in 0..env.disk_blocks {
        let off = env.rng.below_mod(env.disk_blocks) * BLOCK as u64;
        f.read_exact_at(&mut buf, off).map_err(ioe("read"))?;
        env.sink = env.sink.wrapping_add(u64::from(buf[0]));
    }
    Ok(())
}

fn rw(env: &mut TaskEnv, name: &str, size: usize, sync: bool) -> Result<(), String> {
    let path = temp(env, name);
    let blocks = if sync { env.disk_blocks / 2 } else { env.disk_blocks * BLOCK as u64 / size as u64 }.max(1);
    // The file is written plainly first; the random writes then go through the mode tested.
    write_seq(&mut open_out(&path, false)?, blocks, size)?;
    let f = if sync {
        OpenOptions::new().write(true).custom_flags(libc::O_SYNC).open(&path).map_err(ioe("reopen O_SYNC"))?
    } else {
        OpenOptions::new().write(true).open(&path).map_err(ioe("reopen"))?
    };
    write_random(env, &f, blocks, blocks, size)?;
    finish(env, &path, blocks)
}

pub fn disk_rw(env: &mut TaskEnv) -> Result<(), String> {
    rw(env, "disk_rw", BLOCK, false)
}

pub fn disk_brw(env: &mut TaskEnv) -> Result<(), String> {
    rw(env, "disk_brw", BIG_BLOCK, false)
}

pub fn sync_disk_rw(env: &mut TaskEnv) -> Result<(), String> {
    rw(env, "sync_disk_rw", BLOCK, true)
}

/// Copies the first `blocks` blocks of the shared file in `size`-byte pieces.
fn cp(env: &mut TaskEnv, name: &str, size: usize, sync: bool) -> Result<(), String> {
    let path = temp(env, name);
    let mut out = open_out(&path, sync)?;
    let mut input = File::open(&env.shared_file).map_err(ioe("open the shared file"))?;
    let limit = if sync { env.disk_blocks / 2 } else { env.disk_blocks }.max(1) * BLOCK as u64;
    let mut buf = vec![0u8; size];
    let mut copied = 0u64;
    while copied < limit {
        let want = size.min((limit - copied) as usize);
        let got = input.read(&mut buf[..want]).map_err(ioe("read"))?;
        if got == 0 {
            break;
        }
        out.write_all(&buf[..got]).map_err(ioe("write"))?;
        copied += got as u64;
    }
    finish(env, &path, copied)
}

pub fn disk_cp(env: &mut TaskEnv) -> Result<(), String> {
    cp(env, "disk_cp", BLOCK, false)
}

pub fn disk_bcp(env: &mut TaskEnv) -> Result<(), String> {
    cp(env, "disk_bcp", BIG_BLOCK, false)
}

pub fn sync_disk_cp(env: &mut TaskEnv) -> Result<(), String> {
    cp(env, "sync_disk_cp", BLOCK, true)
}

pub fn sync_disk_wrt(env: &mut TaskEnv) -> Result<(), String> {
    let path = temp(env, "sync_disk_wrt");
    let blocks = (env.disk_blocks / 2).max(1);
    write_seq(&mut open_out(&path, true)?, blocks, BLOCK)?;
    finish(env, &path, blocks)
}

pub fn sync_disk_update(env: &mut TaskEnv) -> Result<(), String> {
    let path = temp(env, "sync_disk_update");
    let blocks = env.disk_blocks.max(1);
    write_seq(&mut open_out(&path, false)?, blocks, BLOCK)?;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_SYNC)
        .open(&path)
        .map_err(ioe("reopen O_SYNC"))?;
    let mut buf = [0u8; BLOCK];
    for _ in 0..(blocks / 2).max(1) {
        let off = env.rng.below_mod(blocks) * BLOCK as u64;
        f.read_exact_at(&mut buf, off).map_err(ioe("read"))?;
        buf[0] = buf[0].wrapping_add(1);
        f.write_all_at(&buf, off).map_err(ioe("write"))?;
    }
    finish(env, &path, blocks)
}

pub fn disk_src(env: &mut TaskEnv) -> Result<(), String> {
    let dir = src_dir(&env.shared_file);
    for round in 0..25usize {
        let want = format!("file{:03}.", (round * 7) % SRC_FILES);
        let mut hits = 0u64;
        for entry in std::fs::read_dir(&dir).map_err(ioe("open the search directory"))? {
            let name = entry.map_err(ioe("readdir"))?.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(&want) || name.ends_with(".h") {
                hits += 1;
            }
        }
        env.sink = env.sink.wrapping_add(hits);
    }
    Ok(())
}
