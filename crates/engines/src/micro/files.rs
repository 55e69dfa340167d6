//! lat_mmap, bw_file_rd and bw_mmap_rd over a cached file: mapping a file and dirtying a
//! tenth of it, reading it with read() in 64 KiB chunks (summing every word), and summing
//! it through a mapping; `open2close` variants open (and map) the file every time.

use super::syscalls::{c_path, Body};
use std::ffi::CString;
use std::hint::black_box;
use std::path::Path;

/// read() chunk of bw_file_rd.
const CHUNK: usize = 64 * 1024;

fn open_fd(name: &CString, flags: libc::c_int) -> libc::c_int {
    // SAFETY: a valid C path.
    unsafe { libc::open(name.as_ptr(), flags) }
}

/// Writes a file of `size` bytes (words of its offsets) and reads it once so it is cached.
pub fn make_file(path: &Path, size: usize) -> Result<(), String> {
    let words: Vec<u8> = (0..size / 8).flat_map(|i| (i as u64).to_le_bytes()).collect();
    let mut data = words;
    data.resize(size, 0);
    std::fs::write(path, &data)
        .map_err(|e| format!("cannot write {}: {e}; is the target full?", path.display()))?;
    std::fs::read(path).map(|_| ()).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn sum_words(p: *const u8, len: usize) -> u64 {
    // SAFETY: callers pass a readable region of `len` bytes; u64 reads are unaligned-safe.
    let words = unsafe { std::slice::from_raw_parts(p.cast::<u64>(), len / 8) };
    words.iter().fold(0u64, |a, w| a.wrapping_add(*w))
}

fn map(fd: libc::c_int, size: usize, write: bool) -> Result<*mut u8, String> {
    let prot = if write { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
    // SAFETY: mapping an open file; checked below.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, libc::MAP_SHARED, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    Ok(p.cast())
}

/// lat_mmap: map `size` bytes of the file read-write shared, write a byte every 16 KiB over
/// the first tenth, unmap.
pub fn mmap_latency(file: &Path, size: usize) -> Result<Body, String> {
    let name = c_path(file)?;
    let fd = open_fd(&name, libc::O_RDWR);
    if fd < 0 {
        return Err(format!("cannot open {}", file.display()));
    }
    let fd = Fd(fd);
    // A mapping is tried once here, so a file that cannot be mapped fails before the window.
    // SAFETY: the mapping just made.
    map(fd.0, size, true).map(|p| unsafe { libc::munmap(p.cast(), size) })?;
    Ok(Box::new(move |n| {
        // The whole Fd moves into the closure (a field alone would leave it to close now).
        let fd = &fd;
        for _ in 0..n {
            let Ok(p) = map(fd.0, size, true) else { return };
            let mut off = 0;
            while off < size / 10 {
                // SAFETY: inside the fresh mapping.
                unsafe { std::ptr::write_volatile(p.add(off), 1) };
                off += 16 * 1024;
            }
            // SAFETY: the mapping just made.
            unsafe { libc::munmap(p.cast(), size) };
        }
    }))
}

/// A mapping (address, length) unmapped on drop.
struct Mapping(usize, usize);

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in mmap_read, unmapped once.
        unsafe { libc::munmap(self.0 as *mut libc::c_void, self.1) };
    }
}

/// A descriptor closed on drop.
struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: our descriptor.
        unsafe { libc::close(self.0) };
    }
}

/// bw_file_rd: `size` bytes read from the start in 64 KiB chunks, every word summed; with
/// `open2close` the file is opened and closed around each pass.
pub fn file_read(file: &Path, size: usize, open2close: bool) -> Result<Body, String> {
    let name = c_path(file)?;
    let kept = Fd(open_fd(&name, libc::O_RDONLY));
    if kept.0 < 0 {
        return Err(format!("cannot open {}", file.display()));
    }
    Ok(Box::new(move |n| {
        let kept = &kept;
        let mut buf = vec![0u8; CHUNK];
        let mut sum = 0u64;
        for _ in 0..n {
            let fd = if open2close { open_fd(&name, libc::O_RDONLY) } else { kept.0 };
            // SAFETY: our descriptor and buffer.
            unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
            let mut done = 0;
            while done < size {
                let want = (size - done).min(CHUNK);
                // SAFETY: as above.
                let got = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), want) };
                if got <= 0 {
                    break;
                }
                sum = sum.wrapping_add(sum_words(buf.as_ptr(), got as usize));
                done += got as usize;
            }
            if open2close {
                // SAFETY: the descriptor opened above.
                unsafe { libc::close(fd) };
            }
        }
        black_box(sum);
    }))
}

/// bw_mmap_rd: every word of a `size`-byte mapping summed; mapped once, or with `open2close`
/// opened, mapped, summed, closed and unmapped each pass.
pub fn mmap_read(file: &Path, size: usize, open2close: bool) -> Result<Body, String> {
    let name = c_path(file)?;
    let kept = Fd(open_fd(&name, libc::O_RDONLY));
    if kept.0 < 0 {
        return Err(format!("cannot open {}", file.display()));
    }
    let once = Mapping(map(kept.0, size, false)? as usize, size);
    Ok(Box::new(move |n| {
        // The whole Mapping (not just its address) lives in the closure.
        let (_kept, mapping) = (&kept, &once);
        let once = mapping.0;
        let mut sum = 0u64;
        for _ in 0..n {
            if open2close {
                let fd = Fd(open_fd(&name, libc::O_RDONLY));
                let Ok(p) = map(fd.0, size, false) else { return };
                sum = sum.wrapping_add(sum_words(p, size));
                // SAFETY: the mapping just made.
                unsafe { libc::munmap(p.cast(), size) };
            } else {
                sum = sum.wrapping_add(sum_words(once as *const u8, size));
            }
        }
        black_box(sum);
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_bodies_read_and_map_the_whole_file() {
        let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
        let f = dir.path().join("data");
        make_file(&f, 1 << 20).expect("file");
        assert_eq!(sum_words(std::fs::read(&f).expect("read").as_ptr(), 64), (0..8).sum::<u64>());
        for mut b in [
            file_read(&f, 1 << 20, false).expect("io_only"),
            file_read(&f, 1 << 20, true).expect("open2close"),
            mmap_read(&f, 1 << 20, false).expect("mmap_only"),
            mmap_read(&f, 1 << 20, true).expect("mmap open2close"),
            mmap_latency(&f, 1 << 20).expect("lat_mmap"),
        ] {
            b(2);
        }
        assert!(file_read(&dir.path().join("none"), 10, false).is_err());
        // A body whose descriptor or mapping was lost would return at once.
        for mut b in
            [file_read(&f, 1 << 20, false).expect("io_only"), mmap_read(&f, 1 << 20, false).expect("map")]
        {
            let t0 = std::time::Instant::now();
            b(8);
            assert!(t0.elapsed() > std::time::Duration::from_micros(8 * 20), "8 passes over 1 MiB take time");
        }
    }
}
