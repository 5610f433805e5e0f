//! The nRF52840's UARTE0 receiving bytes by EasyDMA, one buffer at a time, by its registers
//! (nRF52840 Product Specification v1.7, §6.34): no HAL, so that the example builds fast and
//! shows every step. The DK routes UARTE0 to the J-Link's virtual COM port (RXD P0.08).

const UARTE0: usize = 0x4000_2000;
const TASKS_STARTRX: usize = 0x000;
const EVENTS_ENDRX: usize = 0x110;
const ENABLE: usize = 0x500;
const PSEL_RXD: usize = 0x514;
const BAUDRATE: usize = 0x524;
const RXD_PTR: usize = 0x534;
const RXD_MAXCNT: usize = 0x538;
const RXD_AMOUNT: usize = 0x53C;
const CONFIG: usize = 0x56C;
const BAUD_115200: u32 = 0x01D7_E000;
const ENABLE_UARTE: u32 = 8;

fn reg(offset: usize) -> *mut u32 {
    (UARTE0 + offset) as *mut u32
}

/// UARTE0 at 115 200 baud, 8N1, no flow control, receiving on P0.`rx_pin`.
pub struct Uarte0;

impl Uarte0 {
    /// Configures and enables the peripheral.
    pub fn new(rx_pin: u32) -> Self {
        // SAFETY: UARTE0's registers, written once before use; nothing else owns the peripheral.
        unsafe {
            reg(PSEL_RXD).write_volatile(rx_pin);
            reg(BAUDRATE).write_volatile(BAUD_115200);
            reg(CONFIG).write_volatile(0);
            reg(ENABLE).write_volatile(ENABLE_UARTE);
        }
        Uarte0
    }

    /// Blocks until a byte came and writes it into `buf[0]`; returns 1 (a UART never ends, so
    /// the probe stream never sees an end). One DMA transfer of one byte: a line's bytes arrive
    /// slower than they are parsed.
    pub fn read(&self, buf: &mut [u8]) -> usize {
        let mut byte = 0u8;
        loop {
            // SAFETY: `byte` lives until ENDRX, which the loop waits for; the DMA writes 1 byte.
            let n = unsafe {
                reg(RXD_PTR).write_volatile(core::ptr::addr_of_mut!(byte) as u32);
                reg(RXD_MAXCNT).write_volatile(1);
                reg(EVENTS_ENDRX).write_volatile(0);
                reg(TASKS_STARTRX).write_volatile(1);
                while reg(EVENTS_ENDRX).read_volatile() == 0 {}
                reg(RXD_AMOUNT).read_volatile()
            };
            if n == 1 && !buf.is_empty() {
                // SAFETY: the DMA has finished writing `byte` (ENDRX).
                buf[0] = unsafe { core::ptr::read_volatile(core::ptr::addr_of!(byte)) };
                return 1;
            }
        }
    }
}
