//! The parts of include/anvil/runtime.h (and DLPack's dlpack.h) the crate uses, by hand: the
//! types have the C layout, the functions the C signatures. Every function returns 0 on success
//! and -1 on failure, with anvil_get_last_error() saying why.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

pub const KDL_CPU: i32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *const i64,
    pub strides: *const i64,
    pub byte_offset: u64,
}

pub type AnvilGraphExecutorHandle = *mut c_void;

extern "C" {
    pub fn anvil_get_last_error() -> *const c_char;
    pub fn anvil_set_num_threads(num_threads: c_int) -> c_int;
    pub fn anvil_graph_executor_create_from_file(
        path: *const c_char,
        out: *mut AnvilGraphExecutorHandle,
    ) -> c_int;
    pub fn anvil_graph_executor_free(executor: AnvilGraphExecutorHandle) -> c_int;
    pub fn anvil_graph_executor_get_num_inputs(
        executor: AnvilGraphExecutorHandle,
        out: *mut c_int,
    ) -> c_int;
    pub fn anvil_graph_executor_get_num_outputs(
        executor: AnvilGraphExecutorHandle,
        out: *mut c_int,
    ) -> c_int;
    pub fn anvil_graph_executor_get_input_info(
        executor: AnvilGraphExecutorHandle,
        index: c_int,
        name: *mut *const c_char,
        ndim: *mut c_int,
        shape: *mut *const i64,
        dtype: *mut DLDataType,
    ) -> c_int;
    pub fn anvil_graph_executor_get_output_info(
        executor: AnvilGraphExecutorHandle,
        index: c_int,
        name: *mut *const c_char,
        ndim: *mut c_int,
        shape: *mut *const i64,
        dtype: *mut DLDataType,
    ) -> c_int;
    pub fn anvil_graph_executor_set_input_index(
        executor: AnvilGraphExecutorHandle,
        index: c_int,
        value: *const DLTensor,
    ) -> c_int;
    pub fn anvil_graph_executor_run(executor: AnvilGraphExecutorHandle) -> c_int;
    pub fn anvil_graph_executor_copy_output(
        executor: AnvilGraphExecutorHandle,
        index: c_int,
        dst: *mut DLTensor,
    ) -> c_int;
}
