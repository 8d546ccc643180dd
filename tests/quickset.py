"""The quick set and CI's time budget (tests/conftest.py's hooks call these).

Every test compiles C, and a 2-core machine without AVX-512 runs the whole suite in ~24
minutes, more than CI's 20. So the heaviest tests are split (`SLOW`): a sweep keeps one case
in n in the quick set, a single heavy test none; what is left out is the *slow* set.
`FUSEJIT_TEST_SLOW` picks: unset or "0" the quick set (the README's test command), "1" every
test, "only" the slow set (the last step of .ci/run, within what is left of its budget).

`FUSEJIT_TEST_DEADLINE` (a Unix time, set by .ci/run): a test that would start after it is
skipped, and the summary says how many were, so CI ends inside its budget on any machine.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

# "file::test function" -> n: every n-th of its cases is in the quick set (0: none is). The
# figures are each function's seconds in the suite on a 2-core Zen 2 without AVX-512.
SLOW: dict[str, int] = {
    "test_reductions.py::test_reduction_matches_numpy": 4,  # 79 s, 416 cases
    "test_reductions.py::test_float_max_min_across_lanes": 2,  # 14 s
    "test_special.py::test_integer_bool_and_float16_operands": 8,  # 68 s, 46 cases
    "test_special.py::test_against_scipy_wide_ranges": 3,  # 23 s, 92 cases
    # (session 30's scipy.special functions: one case of a kind in the quick set)
    "test_special_poly.py::test_gradients": 0,  # 7 s
    "test_special_poly.py::test_genlaguerre_and_gegenbauer": 3,  # 9 s, 7 cases
    "test_special_poly.py::test_against_scipy": 3,  # 5 s, 11 cases
    "test_special_jy.py::test_spherical_gradients": 0,  # 5 s
    "test_special_jy.py::test_gradients_match_scipy_derivatives": 0,  # 4 s
    "test_special_jy.py::test_special_values": 0,  # 3 s
    "test_special_jy.py::test_documented_differences": 0,  # 2 s
    "test_special_jy.py::test_spherical_against_scipy": 2,  # 8 s, 4 cases
    "test_special_jy.py::test_against_scipy_wide_ranges": 2,  # 7 s, 6 cases
    # (session 31's: the discrete quantiles one case in three)
    "test_special_dquant.py::test_nbinom_quantiles_and_functions": 3,  # 17 s, 8 cases
    "test_special_dquant.py::test_binom_quantiles": 3,  # 8 s, 9 cases
    "test_special_dquant.py::test_poisson_quantiles": 2,  # 5 s, 5 cases
    # (session 31: ~50 s of the quick set moved to the slow set, so CI's README step ends
    # inside the budget with the new tests and the FAKE_CUDA step runs again; the dct,
    # rotate and sort types keep their other tests in the quick set)
    "test_scipy_dct.py::test_every_type_norm_and_orthogonalize": 0,  # 67 s, 4 cases
    "test_scipy_ndinterp.py::test_transforms_every_order_and_mode": 10,  # 57 s, 10 cases
    "test_cuda_fuzz.py::test_fuzz_programs_and_gemm_updates_compile": 0,  # 13 s (nvcc)
    "test_reductions.py::test_logsumexp_weights_and_sign": 0,  # 12 s
    "test_scipy_rankfilt.py::test_cuda_emulated": 0,  # 7 s (g++; the emulation step)
    "test_fft.py::test_on_the_cuda_backend_as_generated": 0,  # 6 s (g++)
    "test_cuda_emu.py::test_held_rows_read_and_written_a_vector_at_a_time": 0,  # 7 s
    "test_scipy_measure.py::test_statistics_match_scipy": 2,  # 9 s, 7 cases
    "test_scipy_ndinterp.py::test_map_coordinates_every_order_and_mode": 6,  # 38 s
    "test_scipy_ndinterp.py::test_spline_filters": 4,  # 27 s
    "test_scipy_ndinterp.py::test_shift_then_zoom_property": 0,  # 16 s
    "test_scipy_signal.py::test_match_scipy": 2,  # 33 s, 108 cases
    "test_scipy_regress.py::test_match_scipy": 2,  # 20 s
    "test_scipy_rankfilt.py::test_scipys_values": 4,  # 16 s
    "test_scipy_stats.py::test_methods_match_scipy": 2,  # 15 s
    # (session 32's: truncnorm's methods compile big kernels, ~5 s each here)
    "test_scipy_truncnorm.py::test_distribution_functions": 6,  # 23 s, 6 cases
    "test_scipy_truncnorm.py::test_quantiles": 2,  # 6 s, 2 cases
    "test_special_carlson.py::test_carlson_against_scipy": 2,  # 5 cases
    "test_special_airy.py::test_against_scipy": 2,  # 2 cases
    "test_scipy_hypergeom.py::test_against_scipy": 6,  # 25 s, 6 cases
    "test_special_carlson.py::test_gradients": 0,  # 2 s
    "test_special_carlson.py::test_carlson_extremes": 0,  # 1 s
    "test_scipy_hypergeom.py::test_large_populations_against_exact_sums": 0,  # 3 s
    "test_array_api.py::test_namespace_against_array_api_strict": 3,  # 32 s, 166 cases
    "test_array_api.py::test_scipy_under_scipy_array_api_subprocess": 0,  # 16 s
    "test_cuda_codegen.py::test_every_op_and_cast_compiles": 0,  # 62 s (nvcc)
    "test_cuda_codegen.py::test_complex_programs_compile_to_cubin": 0,  # 14 s (nvcc)
    "test_cuda_reduce.py::test_reductions_and_matmuls_compile_to_cubin": 0,  # 33 s (nvcc)
    "test_cuda_scalars.py::test_values_and_dtypes_as_numpy": 4,  # 29 s
    "test_cuda_emu.py::test_complex_kernels": 0,  # 16 s
    "test_coverage.py::test_readme_table_is_current": 0,  # 53 s
    "test_elementwise_props.py::test_unary_sweep": 0,  # 29 s
    "test_elementwise_props.py::test_binary_sweep": 0,  # 17 s
    "test_sort_long.py::test_rows_match_numpy": 0,  # 29 s
    "test_sort_long.py::test_rows_past_the_cache_sized_buckets": 0,  # 14 s
    "test_sorting.py::test_searchsorted_matches_numpy": 0,  # 18 s
    "test_sorting.py::test_partition_properties": 0,  # 18 s
    "test_numpy_lib.py::test_products": 0,  # 27 s
    "test_numpy_lib.py::test_trapezoid_gradient": 0,  # 23 s
    "test_numpy_lib.py::test_more_functions_through_numpy_code": 0,  # 23 s
    "test_numpy_lib.py::test_nan_statistics": 0,  # 19 s
    "test_numpy_lib.py::test_scipy_array_api_functions": 0,  # 16 s
    "test_numpy_tail.py::test_linspace_logspace_geomspace": 0,  # 20 s
    "test_order_stats.py::test_quantiles_match_numpy": 0,  # 17 s
    "test_order_stats.py::test_nan_quantiles_match_numpy": 0,  # 15 s
    "test_dask.py::test_reductions_over_chunked_axes": 4,  # 26 s
    "test_masked.py::test_selection_reads_match_numpy": 2,  # 22 s
    "test_scans.py::test_blocked_scans_match_numpy": 2,  # 17 s
    "test_order_stats.py::test_histogram_matches_numpy": 0,  # 17 s
    "test_sort_long.py::test_lengths_at_the_threaded_threshold": 3,  # 13 s
    "test_row_pipe.py::test_deferred_last_phase_gives_the_same_bits": 2,  # 13 s
    "test_export.py::test_cli_bad_input_is_one_clear_line": 3,  # 11 s
    "test_rearrange.py::test_tile_and_repeat_match_numpy": 0,  # 11 s
    "test_rearrange.py::test_pad_matches_numpy": 0,  # 10 s
    "test_rearrange.py::test_flip_and_roll_match_numpy": 0,  # 8 s
    "test_cuda_lapack.py::test_linalg_runs_as_generated": 0,  # 11 s
    "test_complex_order.py::test_ordering_matches_numpy_bit_for_bit": 0,  # 10 s
    "test_numpy_lib.py::test_polyval_sinc_fix_nan_to_num": 0,  # 11 s
    "test_numpy_lib.py::test_rot90_and_diagonals": 0,  # 10 s
    "test_numpy_lib.py::test_cov_corrcoef": 0,  # 10 s
    "test_numpy_lib.py::test_digitize_searchsorted": 0,  # 9 s
    "test_numpy_lib.py::test_vander_count_nonzero_select_choose": 0,  # 7 s
    "test_numpy_tail.py::test_linalg_array_api_functions": 0,  # 9 s
    "test_numpy_tail.py::test_isin": 0,  # 8 s
    "test_scipy_spectral.py::test_match_scipy": 2,  # 10 s
    "test_scipy_linalg.py::test_matches_scipy": 2,  # 8 s
    # (session 33: the README's step had reached 15:18 of CI's 16 minutes here; these
    # second tests of a kind (thread counts, a subprocess, a CLI's bad input), with the quick
    # set's 0.6 of every hypothesis count (tests/conftest.py), leave the later steps time.
    # Seconds on this 2-core x86-64-v3 machine.)
    "test_sort_long.py::test_same_result_on_one_two_and_three_threads": 0,  # 8 s
    "test_scatter.py::test_parallel_accumulation_does_not_depend_on_thread_count": 0,  # 8 s
    "test_colreduce.py::test_same_bits_on_one_and_two_threads": 0,  # 5 s
    "test_numpy_tail.py::test_vecdot_matvec_vecmat": 0,  # 8 s
    "test_numpy_tail.py::test_clip_min_max_keywords": 0,  # 7 s
    "test_numpy_tail.py::test_round_integers_negative_decimals": 0,  # 6 s
    "test_scipy_ndinterp.py::test_geometric_transform_traces_the_mapping_once": 0,  # 8 s
    "test_gridops.py::test_real_parts": 0,  # 6 s
    "test_gridops.py::test_cross": 0,  # 3 s
    "test_dask.py::test_property_chunkings": 0,  # 6 s
    "test_dask.py::test_local_cluster_two_processes": 0,  # 5 s
    "test_dask.py::test_argmax_ties_and_nan_match_numpy": 0,  # 5 s
    "test_dask.py::test_profile_cli_reports_worker_threads_once": 0,  # 4 s
    "test_scipy_ndimage.py::test_names_bound_before_fusejit_is_imported": 0,  # 6 s
    "test_cache.py::test_debug_miss_log_names_the_changed_part": 0,  # 6 s
    "test_cache.py::test_cache_command_bad_input_exits_nonzero_without_traceback": 0,  # 4 s
    "test_trust_cache.py::test_clear_removes_a_killed_writers_temporaries_and_keeps_a_live_ones":
        0,  # 6 s
    "test_trust_cache.py::test_entry_copied_over_another_key_is_a_miss_that_rebuilds": 0,  # 5 s
    "test_cuda_jit.py::test_a_cuda_run_skips_and_counts_refused_tests": 0,  # 6 s
    "test_svd.py::test_cond_of_every_order": 0,  # 5 s
    "test_special_elementary.py::test_powm1_every_case": 0,  # 5 s
    "test_histdd.py::test_histogramdd_matches_numpy": 2,  # 9 s, 3 cases
    "test_numpy_lib.py::test_cov_with_weights": 0,  # 5 s
    "test_numpy_lib.py::test_nanargmax_nanargmin": 0,  # 4 s
    "test_scipy_filter.py::test_cuda_emulated": 0,  # 6 s (g++; the emulation step)
    "test_cuda_emu.py::test_float64_sums_are_compensated": 0,  # 4 s
    "test_special.py::test_comb_of_traced_values": 0,  # 5 s
    "test_tail_calls.py::test_pad_statistic_ramp_and_odd_modes_run_numpys_code": 0,  # 4 s
    "test_profile.py::test_unknown_script_exits_2_without_traceback": 0,  # 3 s
}

MODE = os.environ.get("FUSEJIT_TEST_SLOW", "0")
DEADLINE = float(os.environ.get("FUSEJIT_TEST_DEADLINE", "0") or 0)


def slow_items(items: list[Any]) -> set[int]:
    """The positions in `items` of the slow set's cases (`SLOW`)."""
    seen: dict[str, int] = {}
    out = set()
    for i, item in enumerate(items):
        key = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        n = SLOW.get(key)
        if n is None:
            continue
        k = seen.get(key, 0)
        seen[key] = k + 1
        if n == 0 or k % n:
            out.add(i)
    return out


def select(config: Any, items: list[Any]) -> None:
    """Keep the quick set, the slow set or both (MODE), reporting the rest as deselected."""
    if MODE not in ("0", "1", "only"):
        raise pytest.UsageError(f"FUSEJIT_TEST_SLOW={MODE!r}: use 0, 1 or only")
    if MODE == "1":
        return
    slow = slow_items(items)
    want = MODE == "only"
    keep = [it for i, it in enumerate(items) if (i in slow) == want]
    if len(keep) != len(items):
        config.hook.pytest_deselected(
            items=[it for i, it in enumerate(items) if (i in slow) != want])
        items[:] = keep


def check_deadline() -> None:
    """Skip the test about to start when CI's budget is spent (FUSEJIT_TEST_DEADLINE)."""
    if DEADLINE and time.time() > DEADLINE:
        pytest.skip("past_deadline: CI's time budget was spent before this test started")


def summary(terminalreporter: Any) -> None:
    """What this run left out: the slow set, and tests past CI's deadline."""
    if MODE == "0":
        terminalreporter.write_line(
            f"quick set: {len(SLOW)} heavy tests run some or none of their cases "
            "(tests/quickset.py); FUSEJIT_TEST_SLOW=1 runs every test")
    late = {r.nodeid for rs in terminalreporter.stats.values() for r in rs
            if getattr(r, "skipped", False) and "past_deadline:" in str(r.longrepr)}
    if late:
        terminalreporter.write_line(f"{len(late)} test(s) did not run: CI's time budget "
                                    "(FUSEJIT_TEST_DEADLINE) was spent before they started")
