//! Fuzz target: `import`'s reader of a file (an export read a cell at a time, or a kept
//! cell) must return the file's contents or an error naming the field, never panic; an
//! export it returns must import into a store, twice (the second time merging), without
//! panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;
use racehorse_store::import_stream::{read_import, ImportFile};
use racehorse_store::Store;

fuzz_target!(|data: &[u8]| {
    let Ok(ImportFile::Export(run)) = read_import(data) else { return };
    let Ok(store) = Store::open_in_memory() else { return };
    let _ = store.import_run(&run);
    let _ = store.import_run(&run);
});
