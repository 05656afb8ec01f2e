//! Parser limits, settable from C.

use switchboard::ParserConfig;

use crate::boundary::{self, out_ptr};
use crate::result::swb_result;

/// Parser limits: a plain value, owned by the caller (Box).
///
/// Created with SPEC.md's defaults by `swb_config_new` (max depth 128, max batch
/// length 1000, max message size 8 MiB, batches allowed), changed with the
/// `swb_config_set_*` functions, given to `swb_router_builder_set_config` or
/// `swb_classifier_new` (which copy it), and freed with `swb_config_free`.
///
/// Thread safety: not safe for concurrent mutation; once no longer changed it may be
/// read (passed to the functions above) from any thread.
pub struct swb_config {
    _private: [u8; 0],
}

/// The config, for reading.
///
/// # Safety
/// - `p` must be NULL or come from `swb_config_new`, not freed, not mutated now.
pub(crate) unsafe fn from_ptr<'a>(p: *const swb_config) -> Result<&'a ParserConfig, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: non-null `swb_config` pointers come from `swb_config_new` (a leaked
    // Box<ParserConfig>) and the caller promises the config is not freed or
    // mutated concurrently.
    Ok(unsafe { &*p.cast::<ParserConfig>() })
}

/// The config, for mutation.
///
/// # Safety
/// - `p` must be NULL or come from `swb_config_new`, not freed, not used elsewhere now.
unsafe fn from_mut<'a>(p: *mut swb_config) -> Result<&'a mut ParserConfig, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: per this function's contract, a live, exclusively used Box<ParserConfig>.
    Ok(unsafe { &mut *p.cast::<ParserConfig>() })
}

/// Creates a config holding SPEC.md's default limits.
///
/// - `out`: receives the new config; free it with `swb_config_free`.
///
/// # Safety
/// - `out` must be NULL or point to a writable `swb_config *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_config_new(out: *mut *mut swb_config) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        let cfg = Box::into_raw(Box::new(ParserConfig::new()));
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(cfg.cast()) };
        Ok(())
    })
}

/// Frees a config. NULL is a no-op. Routers and classifiers made with it keep their
/// own copy.
///
/// # Safety
/// - `config` must be NULL or come from `swb_config_new` and not be freed already.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_config_free(config: *mut swb_config) {
    boundary::run_or((), || {
        if !config.is_null() {
            // SAFETY: per the contract, a Box<ParserConfig> leaked by `swb_config_new`
            // and not freed yet: it is rebuilt and dropped once.
            drop(unsafe { Box::from_raw(config.cast::<ParserConfig>()) });
        }
    })
}

/// Sets the deepest nesting accepted (the outermost array or object is level 1):
/// deeper input is answered -32700 with `data` saying why. Default 128.
///
/// Returns `SWB_RESULT_INVALID_LIMIT` (config unchanged) unless 1 <= `max_depth` <= 65536.
///
/// # Safety
/// - `config` must be NULL or a live config from `swb_config_new`, not used
///   concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_config_set_max_depth(
    config: *mut swb_config,
    max_depth: usize,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let cfg = unsafe { from_mut(config) }?;
        if !(1..=ParserConfig::MAX_DEPTH_CAP).contains(&max_depth) {
            return Err(swb_result::InvalidLimit);
        }
        cfg.max_depth(max_depth);
        Ok(())
    })
}

/// Sets the longest batch accepted: a longer one is answered with one single -32600
/// object whose `data` gives the limit. Default 1000. Any value is accepted (0 refuses
/// every batch as too long).
///
/// # Safety
/// - `config` must be NULL or a live config from `swb_config_new`, not used
///   concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_config_set_max_batch_len(
    config: *mut swb_config,
    max_batch_len: usize,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let cfg = unsafe { from_mut(config) }?;
        cfg.max_batch_len(max_batch_len);
        Ok(())
    })
}

/// Sets the largest message accepted, in bytes: a larger one is refused before
/// parsing (-32600 with `data`; an HTTP server answers 413 instead). Default 8 MiB.
///
/// Returns `SWB_RESULT_INVALID_LIMIT` (config unchanged) unless
/// 1 <= `max_message_bytes` <= 4294967294.
///
/// # Safety
/// - `config` must be NULL or a live config from `swb_config_new`, not used
///   concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_config_set_max_message_bytes(
    config: *mut swb_config,
    max_message_bytes: usize,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let cfg = unsafe { from_mut(config) }?;
        if !(1..=ParserConfig::MAX_MESSAGE_BYTES_CAP).contains(&max_message_bytes) {
            return Err(swb_result::InvalidLimit);
        }
        cfg.max_message_bytes(max_message_bytes);
        Ok(())
    })
}

/// Switches batches on (`true`, the default) or off: when off, any batch is answered
/// with one single -32600 object whose `data` says so (the Model Context Protocol
/// dropped batches).
///
/// # Safety
/// - `config` must be NULL or a live config from `swb_config_new`, not used
///   concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_config_set_allow_batches(
    config: *mut swb_config,
    allow: bool,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let cfg = unsafe { from_mut(config) }?;
        cfg.allow_batches(allow);
        Ok(())
    })
}
