//! cargo run --example run_model -- model.so
//!
//! Loads a compiled model, fills each float32 input with a ramp, runs it, and prints each
//! output's first values and the time of one run.
use std::time::Instant;

fn main() -> Result<(), anvil::Error> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anvil::Error("usage: run_model MODEL.so".into()))?;
    let mut model = anvil::GraphExecutor::load(&path)?;
    for i in 0..model.num_inputs() {
        let info = model.input_info(i)?.clone();
        let data: Vec<f32> = (0..info.num_elements())
            .map(|k| (k % 17) as f32 / 17.0 - 0.5)
            .collect();
        model.set_input(i, &data)?;
        println!("input {} '{}' {}{:?}", i, info.name, info.dtype, info.shape);
    }
    let start = Instant::now();
    model.run()?;
    let elapsed = start.elapsed();
    for i in 0..model.num_outputs() {
        let info = model.output_info(i)?.clone();
        let values: Vec<f32> = model.get_output(i)?;
        let head: Vec<String> = values.iter().take(5).map(|v| format!("{:.4}", v)).collect();
        println!(
            "output {} '{}' {}{:?}: {} ...",
            i,
            info.name,
            info.dtype,
            info.shape,
            head.join(" ")
        );
    }
    println!("run: {:.3} ms", elapsed.as_secs_f64() * 1e3);
    Ok(())
}
