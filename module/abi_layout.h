/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * dio_batch: the ABI's layout, as programs rely on it.
 *
 * Every struct of uapi/linux/dio_batch.h: its size, its first published
 * size (*_SIZE_VER0), the offset and size of each of its fields, and the
 * number of each command.  What is published here never changes: a struct
 * grows only at its end (a larger size here, its *_SIZE_VER0 unchanged),
 * and a reserved or padding field that gets a meaning keeps its offset and
 * size (a row for the new name, at the same place).
 *
 * One table, read three times, so that all three agree: the module
 * compiles it into BUILD_BUG_ON()s (abi_check.c), and does not build when
 * its header changed a layout; the host unit test (tests/unit/test_abi.c)
 * checks it against the header as a 64-bit program compiles it, and
 * tests/compat32.c as a 32-bit one does.
 *
 * No include guard: each reader defines these four, then includes this
 * file where its checks go.
 *
 *  DIO_ABI_SIZE(type, size)		sizeof(struct type) is @size
 *  DIO_ABI_CONST(name, value)		the constant @name is @value
 *  DIO_ABI_FIELD(type, f, off, size)	field @f of struct type is at @off
 *					and is @size bytes
 *  DIO_ABI_IOC(cmd, nr)		@cmd is DIO_BATCH_IOC_MAGIC's number @nr,
 *					read and write (its size bits are
 *					the struct's current size, which the
 *					module does not match on)
 */

DIO_ABI_CONST(DIO_BATCH_IOC_MAGIC, 0xDB);

DIO_ABI_SIZE(dio_features, 80);
DIO_ABI_CONST(DIO_FEATURES_SIZE_VER0, 80);
DIO_ABI_FIELD(dio_features, size, 0, 4);
DIO_ABI_FIELD(dio_features, abi_version, 4, 4);
DIO_ABI_FIELD(dio_features, features, 8, 8);
DIO_ABI_FIELD(dio_features, init_flags, 16, 4);
DIO_ABI_FIELD(dio_features, open_flags, 20, 4);
DIO_ABI_FIELD(dio_features, req_flags, 24, 4);
DIO_ABI_FIELD(dio_features, pi_flags, 28, 4);
DIO_ABI_FIELD(dio_features, opcodes, 32, 4);
DIO_ABI_FIELD(dio_features, max_batch, 36, 4);
DIO_ABI_FIELD(dio_features, max_inflight, 40, 4);
DIO_ABI_FIELD(dio_features, max_pi_bytes, 44, 4);
/* ABI 2: was reserved. */
DIO_ABI_FIELD(dio_features, max_user_pinned, 48, 8);
/* ABI 3: were reserved. */
DIO_ABI_FIELD(dio_features, max_fixed_bufs, 56, 4);
DIO_ABI_FIELD(dio_features, reserved0, 60, 4);
DIO_ABI_FIELD(dio_features, max_fixed_buf_bytes, 64, 8);
DIO_ABI_FIELD(dio_features, reserved, 72, 8);

DIO_ABI_SIZE(dio_init, 40);
DIO_ABI_CONST(DIO_INIT_SIZE_VER0, 40);
DIO_ABI_FIELD(dio_init, size, 0, 4);
DIO_ABI_FIELD(dio_init, flags, 4, 4);
DIO_ABI_FIELD(dio_init, key, 8, 8);
DIO_ABI_FIELD(dio_init, mode, 16, 4);
DIO_ABI_FIELD(dio_init, reserved0, 20, 4);
DIO_ABI_FIELD(dio_init, reserved, 24, 16);

DIO_ABI_SIZE(dio_open, 32);
DIO_ABI_CONST(DIO_OPEN_SIZE_VER0, 32);
DIO_ABI_FIELD(dio_open, size, 0, 4);
DIO_ABI_FIELD(dio_open, flags, 4, 4);
DIO_ABI_FIELD(dio_open, fd, 8, 4);
DIO_ABI_FIELD(dio_open, handle, 12, 4);
DIO_ABI_FIELD(dio_open, reserved, 16, 16);

DIO_ABI_SIZE(dio_close, 16);
DIO_ABI_CONST(DIO_CLOSE_SIZE_VER0, 16);
DIO_ABI_FIELD(dio_close, size, 0, 4);
DIO_ABI_FIELD(dio_close, handle, 4, 4);
DIO_ABI_FIELD(dio_close, reserved, 8, 8);

DIO_ABI_SIZE(dio_query, 120);
DIO_ABI_CONST(DIO_QUERY_SIZE_VER0, 120);
DIO_ABI_FIELD(dio_query, size, 0, 4);
DIO_ABI_FIELD(dio_query, handle, 4, 4);
DIO_ABI_FIELD(dio_query, logical_block_size, 8, 4);
DIO_ABI_FIELD(dio_query, physical_block_size, 12, 4);
DIO_ABI_FIELD(dio_query, dma_alignment, 16, 4);
DIO_ABI_FIELD(dio_query, max_segments, 20, 4);
DIO_ABI_FIELD(dio_query, capacity, 24, 8);
DIO_ABI_FIELD(dio_query, max_io_bytes, 32, 4);
DIO_ABI_FIELD(dio_query, max_segment_size, 36, 4);
DIO_ABI_FIELD(dio_query, pi_caps, 40, 4);
DIO_ABI_FIELD(dio_query, pi_interval, 44, 2);
DIO_ABI_FIELD(dio_query, pi_tuple_size, 46, 1);
DIO_ABI_FIELD(dio_query, pi_guard_type, 47, 1);
DIO_ABI_FIELD(dio_query, pi_type, 48, 1);
DIO_ABI_FIELD(dio_query, pi_app_tag_size, 49, 1);
DIO_ABI_FIELD(dio_query, pi_ref_tag_size, 50, 1);
DIO_ABI_FIELD(dio_query, pi_offset, 51, 1);
DIO_ABI_FIELD(dio_query, pi_storage_tag_size, 52, 1);
DIO_ABI_FIELD(dio_query, pi_md_size, 53, 1);
DIO_ABI_FIELD(dio_query, pi_opaque_size, 54, 1);
DIO_ABI_FIELD(dio_query, pi_opaque_offset, 55, 1);
DIO_ABI_FIELD(dio_query, profile, 56, 32);
DIO_ABI_FIELD(dio_query, dev_major, 88, 4);
DIO_ABI_FIELD(dio_query, dev_minor, 92, 4);
/* ABI 4: was the first 8 bytes of reserved. */
DIO_ABI_FIELD(dio_query, part_start_bytes, 96, 8);
DIO_ABI_FIELD(dio_query, reserved, 104, 16);

/* ABI 2. */
DIO_ABI_SIZE(dio_stat, 80);
DIO_ABI_CONST(DIO_STAT_SIZE_VER0, 80);
DIO_ABI_FIELD(dio_stat, size, 0, 4);
DIO_ABI_FIELD(dio_stat, flags, 4, 4);
DIO_ABI_FIELD(dio_stat, key, 8, 8);
DIO_ABI_FIELD(dio_stat, uid, 16, 4);
DIO_ABI_FIELD(dio_stat, gid, 20, 4);
DIO_ABI_FIELD(dio_stat, cuid, 24, 4);
DIO_ABI_FIELD(dio_stat, cgid, 28, 4);
DIO_ABI_FIELD(dio_stat, mode, 32, 4);
DIO_ABI_FIELD(dio_stat, cpid, 36, 4);
DIO_ABI_FIELD(dio_stat, nr_descriptors, 40, 4);
DIO_ABI_FIELD(dio_stat, nr_handles, 44, 4);
DIO_ABI_FIELD(dio_stat, reserved, 48, 32);

DIO_ABI_SIZE(dio_request, 128);
DIO_ABI_CONST(DIO_REQUEST_SIZE_VER0, 128);
DIO_ABI_FIELD(dio_request, size, 0, 4);
DIO_ABI_FIELD(dio_request, opcode, 4, 1);
DIO_ABI_FIELD(dio_request, pad0, 5, 1);
DIO_ABI_FIELD(dio_request, flags, 6, 2);
DIO_ABI_FIELD(dio_request, handle, 8, 4);
/* ABI 3: buf_index is the old pad1, same place, same size. */
DIO_ABI_FIELD(dio_request, buf_index, 12, 4);
DIO_ABI_FIELD(dio_request, pad1, 12, 4);
DIO_ABI_FIELD(dio_request, buf, 16, 8);
DIO_ABI_FIELD(dio_request, len, 24, 8);
DIO_ABI_FIELD(dio_request, offset, 32, 8);
DIO_ABI_FIELD(dio_request, cookie, 40, 8);
DIO_ABI_FIELD(dio_request, pi_buf, 48, 8);
DIO_ABI_FIELD(dio_request, pi_len, 56, 4);
DIO_ABI_FIELD(dio_request, pi_flags, 60, 2);
DIO_ABI_FIELD(dio_request, app_tag, 62, 2);
DIO_ABI_FIELD(dio_request, app_tag_mask, 64, 2);
DIO_ABI_FIELD(dio_request, pad2, 66, 6);
DIO_ABI_FIELD(dio_request, result, 72, 8);
DIO_ABI_FIELD(dio_request, pi_err_interval, 80, 8);
DIO_ABI_FIELD(dio_request, pi_err_expected, 88, 8);
DIO_ABI_FIELD(dio_request, pi_err_actual, 96, 8);
DIO_ABI_FIELD(dio_request, pi_err_tag, 104, 1);
DIO_ABI_FIELD(dio_request, pi_err_source, 105, 1);
DIO_ABI_FIELD(dio_request, pad3, 106, 6);
DIO_ABI_FIELD(dio_request, reserved, 112, 16);

DIO_ABI_SIZE(dio_submit, 32);
DIO_ABI_CONST(DIO_SUBMIT_SIZE_VER0, 32);
DIO_ABI_FIELD(dio_submit, size, 0, 4);
DIO_ABI_FIELD(dio_submit, nr, 4, 4);
DIO_ABI_FIELD(dio_submit, reqs, 8, 8);
DIO_ABI_FIELD(dio_submit, reserved, 16, 16);

DIO_ABI_SIZE(dio_wait, 48);
DIO_ABI_CONST(DIO_WAIT_SIZE_VER0, 48);
DIO_ABI_FIELD(dio_wait, size, 0, 4);
DIO_ABI_FIELD(dio_wait, nr, 4, 4);
DIO_ABI_FIELD(dio_wait, reqs, 8, 8);
DIO_ABI_FIELD(dio_wait, min_nr, 16, 4);
DIO_ABI_FIELD(dio_wait, pad, 20, 4);
DIO_ABI_FIELD(dio_wait, timeout_ns, 24, 8);
DIO_ABI_FIELD(dio_wait, reserved, 32, 16);

/* ABI 3: an element of DIO_IOC_REGISTER's array, without a size field. */
DIO_ABI_SIZE(dio_fixed_buf, 16);
DIO_ABI_FIELD(dio_fixed_buf, addr, 0, 8);
DIO_ABI_FIELD(dio_fixed_buf, len, 8, 8);

/* ABI 3. */
DIO_ABI_SIZE(dio_register, 40);
DIO_ABI_CONST(DIO_REGISTER_SIZE_VER0, 40);
DIO_ABI_FIELD(dio_register, size, 0, 4);
DIO_ABI_FIELD(dio_register, nr, 4, 4);
DIO_ABI_FIELD(dio_register, bufs, 8, 8);
DIO_ABI_FIELD(dio_register, flags, 16, 4);
DIO_ABI_FIELD(dio_register, pad, 20, 4);
DIO_ABI_FIELD(dio_register, reserved, 24, 16);

/* ABI 5. */
DIO_ABI_SIZE(dio_counters, 160);
DIO_ABI_CONST(DIO_COUNTERS_SIZE_VER0, 160);
DIO_ABI_FIELD(dio_counters, size, 0, 4);
DIO_ABI_FIELD(dio_counters, flags, 4, 4);
DIO_ABI_FIELD(dio_counters, handle, 8, 4);
DIO_ABI_FIELD(dio_counters, pad, 12, 4);
DIO_ABI_FIELD(dio_counters, reads, 16, 8);
DIO_ABI_FIELD(dio_counters, writes, 24, 8);
DIO_ABI_FIELD(dio_counters, flushes, 32, 8);
DIO_ABI_FIELD(dio_counters, read_bytes, 40, 8);
DIO_ABI_FIELD(dio_counters, write_bytes, 48, 8);
DIO_ABI_FIELD(dio_counters, io_errors, 56, 8);
DIO_ABI_FIELD(dio_counters, refused, 64, 8);
DIO_ABI_FIELD(dio_counters, pi_guard, 72, 8);
DIO_ABI_FIELD(dio_counters, pi_app, 80, 8);
DIO_ABI_FIELD(dio_counters, pi_ref, 88, 8);
DIO_ABI_FIELD(dio_counters, pi_unknown, 96, 8);
DIO_ABI_FIELD(dio_counters, pi_by_user, 104, 8);
DIO_ABI_FIELD(dio_counters, pi_by_module, 112, 8);
DIO_ABI_FIELD(dio_counters, pi_by_device, 120, 8);
DIO_ABI_FIELD(dio_counters, reserved, 128, 32);

DIO_ABI_IOC(DIO_IOC_FEATURES, 0x40);
DIO_ABI_IOC(DIO_IOC_INIT, 0x41);
DIO_ABI_IOC(DIO_IOC_OPEN, 0x42);
DIO_ABI_IOC(DIO_IOC_CLOSE, 0x43);
DIO_ABI_IOC(DIO_IOC_QUERY, 0x44);
DIO_ABI_IOC(DIO_IOC_SUBMIT, 0x45);
DIO_ABI_IOC(DIO_IOC_WAIT, 0x46);
DIO_ABI_IOC(DIO_IOC_COLLECT, 0x47);
DIO_ABI_IOC(DIO_IOC_STAT, 0x48);
DIO_ABI_IOC(DIO_IOC_REGISTER, 0x49);
DIO_ABI_IOC(DIO_IOC_UNREGISTER, 0x4A);
DIO_ABI_IOC(DIO_IOC_COUNTERS, 0x4B);
