//! Run models compiled by Anvil (`anvil compile model.onnx -o model.so`) from Rust.
//!
//! ```no_run
//! use anvil::GraphExecutor;
//! let mut model = GraphExecutor::load("model.so")?;
//! let input = vec![0.5f32; model.input_info(0)?.num_elements()];
//! model.set_input(0, &input)?;
//! model.run()?;
//! let logits: Vec<f32> = model.get_output(0)?;
//! # Ok::<(), anvil::Error>(())
//! ```
//!
//! A safe layer over the runtime's C API (`include/anvil/runtime.h`, bound by hand in `ffi`):
//! every failure is an [`Error`] carrying the runtime's message (which names the input, the
//! expected and given shapes, the model node whose kernel failed), and the executor is freed when
//! it is dropped. Inputs are set from slices and outputs read into vectors, with the element type
//! and count checked against the model.
mod ffi;

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_int;
use std::path::Path;

/// What went wrong, in the runtime's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// The calling thread's last runtime error, after a C call returned -1.
fn last_error() -> Error {
    // SAFETY: the runtime returns a NUL-terminated string valid until its next error.
    let message = unsafe { CStr::from_ptr(ffi::anvil_get_last_error()) };
    Error(message.to_string_lossy().into_owned())
}

fn check(status: c_int) -> Result<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(last_error())
    }
}

/// An element type, as DLPack spells it (code, bits, lanes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

impl DType {
    const INT: u8 = 0;
    const UINT: u8 = 1;
    const FLOAT: u8 = 2;
    const BFLOAT: u8 = 4;

    /// Bytes one element takes (bool takes one).
    pub fn bytes(&self) -> usize {
        (self.bits as usize * self.lanes as usize).div_ceil(8)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match (self.code, self.bits) {
            (DType::UINT, 1) => return f.write_str("bool"),
            (DType::INT, _) => "int",
            (DType::UINT, _) => "uint",
            (DType::FLOAT, _) => "float",
            (DType::BFLOAT, _) => "bfloat",
            _ => "dtype",
        };
        write!(f, "{}{}", name, self.bits)?;
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

impl From<ffi::DLDataType> for DType {
    fn from(t: ffi::DLDataType) -> Self {
        DType {
            code: t.code,
            bits: t.bits,
            lanes: t.lanes,
        }
    }
}

/// Rust types that are tensor elements: the model's dtype must be this one.
pub trait Element: Copy + Default {
    const DTYPE: DType;
}

macro_rules! element {
    ($t:ty, $code:expr, $bits:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType {
                code: $code,
                bits: $bits,
                lanes: 1,
            };
        }
    };
}
element!(f32, DType::FLOAT, 32);
element!(f64, DType::FLOAT, 64);
element!(i8, DType::INT, 8);
element!(i16, DType::INT, 16);
element!(i32, DType::INT, 32);
element!(i64, DType::INT, 64);
element!(u8, DType::UINT, 8);
element!(u16, DType::UINT, 16);
element!(u32, DType::UINT, 32);
element!(u64, DType::UINT, 64);
element!(bool, DType::UINT, 1);

/// Name, shape and element type of a model input or output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub shape: Vec<i64>,
    pub dtype: DType,
}

impl TensorInfo {
    pub fn num_elements(&self) -> usize {
        self.shape.iter().map(|&d| d.max(0) as usize).product()
    }
}

/// A compiled model (anvil compile's .so) loaded for the graph executor: set inputs, run, read
/// outputs. Freed when dropped. One thread at a time uses it (it may move between threads).
pub struct GraphExecutor {
    handle: ffi::AnvilGraphExecutorHandle,
    inputs: Vec<TensorInfo>,
    outputs: Vec<TensorInfo>,
}

// SAFETY: the runtime allows an executor to be handed to another thread (runtime.h); &mut self on
// the stateful calls keeps it to one thread at a time.
unsafe impl Send for GraphExecutor {}

type InfoFn = unsafe extern "C" fn(
    ffi::AnvilGraphExecutorHandle,
    c_int,
    *mut *const std::os::raw::c_char,
    *mut c_int,
    *mut *const i64,
    *mut ffi::DLDataType,
) -> c_int;

fn tensor_info(
    handle: ffi::AnvilGraphExecutorHandle,
    index: usize,
    f: InfoFn,
) -> Result<TensorInfo> {
    let mut name = std::ptr::null();
    let mut ndim: c_int = 0;
    let mut shape = std::ptr::null();
    let mut dtype = ffi::DLDataType {
        code: 0,
        bits: 0,
        lanes: 0,
    };
    // SAFETY: the out pointers are valid; the name and shape live as long as the executor.
    check(unsafe {
        f(
            handle,
            index as c_int,
            &mut name,
            &mut ndim,
            &mut shape,
            &mut dtype,
        )
    })?;
    let shape = if ndim > 0 {
        unsafe { std::slice::from_raw_parts(shape, ndim as usize) }.to_vec()
    } else {
        Vec::new()
    };
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    Ok(TensorInfo {
        name,
        shape,
        dtype: dtype.into(),
    })
}

/// A CPU tensor of `info`'s shape and T's dtype over `data` (compact, row-major).
fn dl_tensor<T: Element>(info: &TensorInfo, data: *mut std::os::raw::c_void) -> ffi::DLTensor {
    ffi::DLTensor {
        data,
        device: ffi::DLDevice {
            device_type: ffi::KDL_CPU,
            device_id: 0,
        },
        ndim: info.shape.len() as i32,
        dtype: ffi::DLDataType {
            code: T::DTYPE.code,
            bits: T::DTYPE.bits,
            lanes: T::DTYPE.lanes,
        },
        shape: info.shape.as_ptr(),
        strides: std::ptr::null(),
        byte_offset: 0,
    }
}

impl GraphExecutor {
    /// Loads a model library; the error names the path when it is not one.
    pub fn load<P: AsRef<Path>>(path: P) -> Result<Self> {
        let path = path.as_ref();
        let c_path = CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| Error(format!("the path {} has a NUL byte", path.display())))?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: a valid C string and out pointer.
        check(unsafe { ffi::anvil_graph_executor_create_from_file(c_path.as_ptr(), &mut handle) })?;
        let mut executor = GraphExecutor {
            handle,
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        let (mut n_in, mut n_out): (c_int, c_int) = (0, 0);
        check(unsafe { ffi::anvil_graph_executor_get_num_inputs(handle, &mut n_in) })?;
        check(unsafe { ffi::anvil_graph_executor_get_num_outputs(handle, &mut n_out) })?;
        for i in 0..n_in as usize {
            executor.inputs.push(tensor_info(
                handle,
                i,
                ffi::anvil_graph_executor_get_input_info,
            )?);
        }
        for i in 0..n_out as usize {
            executor.outputs.push(tensor_info(
                handle,
                i,
                ffi::anvil_graph_executor_get_output_info,
            )?);
        }
        Ok(executor)
    }

    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    pub fn input_info(&self, index: usize) -> Result<&TensorInfo> {
        self.inputs.get(index).ok_or_else(|| {
            Error(format!(
                "input {} is out of range: the model has {} inputs",
                index,
                self.inputs.len()
            ))
        })
    }

    pub fn output_info(&self, index: usize) -> Result<&TensorInfo> {
        self.outputs.get(index).ok_or_else(|| {
            Error(format!(
                "output {} is out of range: the model has {} outputs",
                index,
                self.outputs.len()
            ))
        })
    }

    /// The index of the input called `name`.
    pub fn input_index(&self, name: &str) -> Result<usize> {
        self.inputs
            .iter()
            .position(|i| i.name == name)
            .ok_or_else(|| {
                let names: Vec<String> = self
                    .inputs
                    .iter()
                    .map(|i| format!("'{}'", i.name))
                    .collect();
                Error(format!(
                    "the model has no input named '{}'; its inputs are {}",
                    name,
                    names.join(", ")
                ))
            })
    }

    fn check_slice<T: Element>(info: &TensorInfo, what: &str, len: usize) -> Result<()> {
        if T::DTYPE != info.dtype {
            return Err(Error(format!(
                "{} '{}' is {}, not {} (the slice's element type)",
                what,
                info.name,
                info.dtype,
                T::DTYPE
            )));
        }
        if len != info.num_elements() {
            return Err(Error(format!(
                "{} '{}' of shape {:?} takes {} elements; the slice has {}",
                what,
                info.name,
                info.shape,
                info.num_elements(),
                len
            )));
        }
        Ok(())
    }

    /// Copies `data` (row-major, the input's element type and element count) into input `index`.
    pub fn set_input<T: Element>(&mut self, index: usize, data: &[T]) -> Result<()> {
        let info = self.input_info(index)?;
        Self::check_slice::<T>(info, "input", data.len())?;
        let tensor = dl_tensor::<T>(info, data.as_ptr() as *mut _);
        // SAFETY: the tensor describes `data` exactly; the runtime copies it before returning.
        check(unsafe {
            ffi::anvil_graph_executor_set_input_index(self.handle, index as c_int, &tensor)
        })
    }

    /// set_input by the input's name.
    pub fn set_input_by_name<T: Element>(&mut self, name: &str, data: &[T]) -> Result<()> {
        let index = self.input_index(name)?;
        self.set_input(index, data)
    }

    /// Runs every kernel; the error names the model node whose kernel failed.
    pub fn run(&mut self) -> Result<()> {
        check(unsafe { ffi::anvil_graph_executor_run(self.handle) })
    }

    /// A copy of output `index` (row-major), in its element type.
    pub fn get_output<T: Element>(&self, index: usize) -> Result<Vec<T>> {
        let info = self.output_info(index)?;
        let mut out = vec![T::default(); info.num_elements()];
        Self::check_slice::<T>(info, "output", out.len())?;
        let mut tensor = dl_tensor::<T>(info, out.as_mut_ptr() as *mut _);
        // SAFETY: the tensor describes `out` exactly.
        check(unsafe {
            ffi::anvil_graph_executor_copy_output(self.handle, index as c_int, &mut tensor)
        })?;
        Ok(out)
    }
}

impl Drop for GraphExecutor {
    fn drop(&mut self) {
        // SAFETY: the handle came from create_from_file and is freed once.
        unsafe { ffi::anvil_graph_executor_free(self.handle) };
    }
}

/// Sets the number of the runtime's worker threads (0: one per core).
pub fn set_num_threads(threads: usize) -> Result<()> {
    check(unsafe { ffi::anvil_set_num_threads(threads as c_int) })
}
