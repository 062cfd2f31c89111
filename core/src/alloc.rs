//! The global allocator of the processes that host our server (`a2a serve`, the Node module):
//! mimalloc, asked for a plain block whenever the alignment wanted is one every block has.
//!
//! Why not `mimalloc::MiMalloc`: it calls `mi_malloc_aligned` for every allocation, and
//! mimalloc 3 serves an aligned request above its small-size class (1 KiB) by over-allocating
//! on a slow path. A SendMessage makes about 26 such allocations (futures, I/O and answer
//! buffers); callgrind put that path at about 4% of the request. The rule for a plain block is
//! std's own (`System` uses it for `malloc`): the alignment is at most what mimalloc guarantees,
//! and no larger than the size.
use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// Every mimalloc block is aligned to this (`MI_MAX_ALIGN_SIZE`, the alignment of
/// `max_align_t`), provided the block is at least that large.
const GUARANTEED_ALIGN: usize = 16;

fn plain(align: usize, size: usize) -> bool {
    align <= GUARANTEED_ALIGN && align <= size
}

/// Use with `#[global_allocator] static A: a2a_native::alloc::MiMalloc = a2a_native::alloc::MiMalloc;`
pub struct MiMalloc;

// SAFETY: each method forwards to the mimalloc call of the same contract; a block is returned
// with the layout's alignment (`plain` only when mimalloc guarantees it), and every block, plain
// or aligned, is freed and resized by `mi_free`/`mi_realloc*`, which accept either.
unsafe impl GlobalAlloc for MiMalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        let block = if plain(align, size) {
            unsafe { mi::mi_malloc(size) }
        } else {
            unsafe { mi::mi_malloc_aligned(size, align) }
        };
        block as *mut u8
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        let block = if plain(align, size) {
            unsafe { mi::mi_zalloc(size) }
        } else {
            unsafe { mi::mi_zalloc_aligned(size, align) }
        };
        block as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi::mi_free(ptr as *mut c_void) };
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        let block = if plain(align, new_size) {
            unsafe { mi::mi_realloc(ptr as *mut c_void, new_size) }
        } else {
            unsafe { mi::mi_realloc_aligned(ptr as *mut c_void, new_size, align) }
        };
        block as *mut u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every size and alignment come back aligned as asked, keep their bytes across a
    /// resize, and zeroed ones are zero.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let a = MiMalloc;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 128, 4096] {
            for size in [1usize, 3, 8, 15, 16, 24, 100, 1024, 1025, 5000, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc size {size} align {align}");
                    std::ptr::write_bytes(p, 0xA5, size);
                    let grown = size * 3 + 7;
                    let q = a.realloc(p, layout, grown);
                    assert_eq!(q as usize % align, 0, "realloc size {grown} align {align}");
                    assert!(std::slice::from_raw_parts(q, size).iter().all(|&b| b == 0xA5));
                    a.dealloc(q, Layout::from_size_align(grown, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zalloc size {size} align {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
