//! FPGA cycle model of neurobits (filled by the FPGA issue).
#![no_std]
