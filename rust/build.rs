//! Links libanvil_runtime.so: from $ANVIL_RUNTIME_DIR, else the build tree beside the crate
//! (../build/src/runtime). The library's directory goes into the run path too, so tests and
//! examples run without LD_LIBRARY_PATH.
use std::env;
use std::path::PathBuf;

fn main() {
    let dir = match env::var("ANVIL_RUNTIME_DIR") {
        Ok(d) => PathBuf::from(d),
        Err(_) => {
            PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../build/src/runtime")
        }
    };
    let lib = dir.join("libanvil_runtime.so");
    if !lib.exists() {
        panic!(
            "libanvil_runtime.so is not in {} (build Anvil first, or set ANVIL_RUNTIME_DIR)",
            dir.display()
        );
    }
    let dir = dir.canonicalize().unwrap();
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=anvil_runtime");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:rerun-if-env-changed=ANVIL_RUNTIME_DIR");
    println!("cargo:rerun-if-changed={}", lib.display());
}
