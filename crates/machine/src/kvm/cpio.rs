//! A small writer of the newc ("070701") cpio format, the format the Linux kernel unpacks as
//! an initramfs: directories, regular files and symbolic links, no compression. Several
//! archives written one after another form one initramfs (the kernel reads them in turn).

use std::io::{self, Write};

/// What one archive member is.
pub enum Entry<'a> {
    Dir,
    File {
        data: &'a [u8],
        executable: bool,
    },
    Symlink {
        target: &'a str,
    },
    /// A character device node (e.g. /dev/console, 5:1), for the kernel's first console.
    CharDev {
        major: u32,
        minor: u32,
    },
}

/// Writes newc members to `out`, numbering their inodes; call [`Writer::finish`] at the end.
pub struct Writer<W: Write> {
    out: W,
    written: u64,
    next_ino: u32,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer { out, written: 0, next_ino: 1 }
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - (self.written % 4) as usize) % 4;
        self.put(&[0u8; 3][..n])
    }

    fn header(&mut self, name: &str, mode: u32, nlink: u32, size: usize) -> io::Result<()> {
        self.header_dev(name, mode, nlink, size, (0, 0))
    }

    fn header_dev(
        &mut self,
        name: &str,
        mode: u32,
        nlink: u32,
        size: usize,
        rdev: (u32, u32),
    ) -> io::Result<()> {
        let size = u32::try_from(size)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: over 4 GiB")))?;
        let name_size = name.len() as u32 + 1;
        let fields = [self.next_ino, mode, 0, 0, nlink, 0, size, 0, 0, rdev.0, rdev.1, name_size, 0];
        self.next_ino += 1;
        let mut h = String::from("070701");
        for f in fields {
            h.push_str(&format!("{f:08X}"));
        }
        self.put(h.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad()
    }

    /// Adds `name` (a path without the leading '/', e.g. `lib/x86_64-linux-gnu/libc.so.6`).
    pub fn add(&mut self, name: &str, entry: Entry<'_>) -> io::Result<()> {
        match entry {
            Entry::Dir => self.header(name, 0o040_755, 2, 0),
            Entry::File { data, executable } => {
                let mode = if executable { 0o100_755 } else { 0o100_644 };
                self.header(name, mode, 1, data.len())?;
                self.put(data)?;
                self.pad()
            }
            Entry::Symlink { target } => {
                self.header(name, 0o120_777, 1, target.len())?;
                self.put(target.as_bytes())?;
                self.pad()
            }
            Entry::CharDev { major, minor } => self.header_dev(name, 0o020_600, 1, 0, (major, minor)),
        }
    }

    /// Writes the trailer and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.header("TRAILER!!!", 0, 1, 0)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_newc_with_four_byte_alignment() {
        let mut w = Writer::new(Vec::new());
        w.add("bin", Entry::Dir).unwrap();
        w.add("bin/x", Entry::File { data: b"hello", executable: true }).unwrap();
        w.add("lib64", Entry::Symlink { target: "lib" }).unwrap();
        let out = w.finish().unwrap();
        assert!(out.starts_with(b"070701"));
        assert_eq!(out.len() % 4, 0);
        let text = String::from_utf8_lossy(&out);
        // The file's header: inode 2, mode 100755, size 5, name size 6 ("bin/x" + NUL).
        let file = format!("070701{:08X}{:08X}", 2, 0o100_755);
        let at = text.find(&file).expect("file header");
        assert_eq!(&text[at + 6 + 6 * 8..at + 6 + 7 * 8], "00000005");
        assert_eq!(&text[at + 6 + 11 * 8..at + 6 + 12 * 8], "00000006");
        let data = at + 110 + 6; // header, "bin/x\0" (already at a multiple of 4)
        assert_eq!(&out[data..data + 5], b"hello");
        assert!(text.contains("TRAILER!!!"));
    }
}
