//! The crate against models compiled here with the `anvil` command line ($ANVIL_CLI, default
//! ../build/src/driver/cli/anvil): outputs equal what the model computes, and every mistake is an
//! Err with the runtime's message, never a crash.
use std::path::PathBuf;
use std::process::Command;

use anvil::{DType, GraphExecutor};

fn anvil_cli() -> PathBuf {
    match std::env::var("ANVIL_CLI") {
        Ok(p) => PathBuf::from(p),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../build/src/driver/cli/anvil"),
    }
}

/// Compiles a module in Anvil's text format; returns the library's path.
fn compile(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("anvil_rust_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join(format!("{}.anvil", name));
    let library = dir.join(format!("{}.so", name));
    std::fs::write(&source, text).unwrap();
    let out = Command::new(anvil_cli())
        .arg("compile")
        .arg(&source)
        .arg("-o")
        .arg(&library)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "anvil compile failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    library
}

#[test]
fn runs_a_model_on_slices() {
    let so = compile(
        "relu_add",
        "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32]) {\n  nn.relu(add(%a, %b))\n}\n",
    );
    let mut model = GraphExecutor::load(&so).unwrap();
    assert_eq!(model.num_inputs(), 2);
    assert_eq!(model.num_outputs(), 1);
    let a_info = model.input_info(0).unwrap();
    assert_eq!(a_info.name, "a");
    assert_eq!(a_info.shape, vec![2, 3]);
    assert_eq!(
        a_info.dtype,
        DType {
            code: 2,
            bits: 32,
            lanes: 1
        }
    );
    assert_eq!(a_info.dtype.to_string(), "float32");
    let a = [1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0];
    let b = [0.5f32; 6];
    model.set_input(0, &a).unwrap();
    model.set_input_by_name("b", &b).unwrap();
    model.run().unwrap();
    let y: Vec<f32> = model.get_output(0).unwrap();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, z)| (x + z).max(0.0)).collect();
    assert_eq!(y, expected);
    // Run again on other inputs: outputs follow.
    model.set_input(1, &[-10.0f32; 6]).unwrap();
    model.run().unwrap();
    assert_eq!(model.get_output::<f32>(0).unwrap(), vec![0.0f32; 6]);
}

#[test]
fn mistakes_are_errors_with_the_runtimes_message() {
    let so = compile(
        "exp_i",
        "def @main(%x: Tensor[(4), int32]) {\n  add(%x, %x)\n}\n",
    );
    let mut model = GraphExecutor::load(&so).unwrap();
    let e = model.set_input(0, &[1.0f32; 4]).unwrap_err();
    assert_eq!(
        e.0,
        "input 'x' is int32, not float32 (the slice's element type)"
    );
    let e = model.set_input(0, &[1i32; 5]).unwrap_err();
    assert_eq!(
        e.0,
        "input 'x' of shape [4] takes 4 elements; the slice has 5"
    );
    assert!(model
        .set_input(3, &[1i32; 4])
        .unwrap_err()
        .0
        .contains("input 3 is out of range"));
    assert!(model
        .set_input_by_name("y", &[1i32; 4])
        .unwrap_err()
        .0
        .contains("no input named 'y'"));
    model.set_input(0, &[1i32, 2, 3, 4]).unwrap();
    model.run().unwrap();
    assert_eq!(model.get_output::<i32>(0).unwrap(), vec![2, 4, 6, 8]);
    assert!(model
        .get_output::<f32>(0)
        .unwrap_err()
        .0
        .contains("is int32, not float32"));

    let missing = GraphExecutor::load("/nonexistent/model.so").err().unwrap();
    assert!(missing.0.contains("/nonexistent/model.so"), "{}", missing);
    let junk = std::env::temp_dir().join(format!("anvil_rust_junk_{}.so", std::process::id()));
    std::fs::write(&junk, b"not a library").unwrap();
    assert!(GraphExecutor::load(&junk).is_err());
    std::fs::remove_file(junk).unwrap();
}

#[test]
fn the_example_runs_a_model() {
    let so = compile(
        "example_model",
        "def @main(%x: Tensor[(1, 8), float32]) {\n  sigmoid(%x)\n}\n",
    );
    // cargo test builds the examples beside the test binaries: target/<profile>/examples.
    let deps = std::env::current_exe().unwrap();
    let example = deps
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/run_model");
    let out = Command::new(&example).arg(&so).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("input 0 'x' float32[1, 8]"), "{}", text);
    assert!(text.contains("output 0 "), "{}", text);
    assert!(text.contains("run: "), "{}", text);
    let bad = Command::new(&example)
        .arg("/nonexistent.so")
        .output()
        .unwrap();
    assert!(!bad.status.success());
}
