"""How the CUDA timer splits its repetitions into bursts (worker/timing.py `_plan`)."""

from tritonforge.worker.timing import TimingConfig, _plan

GIB = 1 << 30


def test_a_slow_pair_gets_bursts_of_about_burst_ms_and_enough_rounds():
    plan = _plan(TimingConfig(), slowest_ms=8.0, per_call_bytes=384 << 20, free_bytes=100 * GIB)
    assert plan.burst == 6 and plan.chunk == 6  # ~50 ms of an 8 ms call, 4 rounds of 25 reps
    assert plan.burst * plan.rounds >= 25  # rep_ms 200 / 8 ms
    assert plan.rounds >= TimingConfig().min_rounds


def test_microsecond_kernels_still_alternate_min_rounds_times():
    plan = _plan(TimingConfig(), slowest_ms=0.005, per_call_bytes=1 << 20, free_bytes=100 * GIB)
    assert plan.rounds == TimingConfig().min_rounds
    assert plan.burst * plan.rounds == TimingConfig().max_reps


def test_memory_bounds_how_many_calls_hold_inputs_at_once_not_the_burst():
    plan = _plan(TimingConfig(), slowest_ms=2.5, per_call_bytes=3 * GIB, free_bytes=100 * GIB)
    assert plan.chunk == 1  # 4 GiB of burst_bytes hold one 3 GiB call
    assert plan.burst == 20 and plan.rounds == 4
    tight = _plan(TimingConfig(), slowest_ms=0.1, per_call_bytes=GIB, free_bytes=8 * GIB)
    assert tight.chunk == 2  # a quarter of the free memory, not burst_bytes


def _estimate(gpu_ms: float, cycle_ms: float, host_ms: float):
    from tritonforge.worker.timing import _Estimate

    return _Estimate(gpu_ms=gpu_ms, cycle_ms=cycle_ms, host_ms=host_ms)


def test_a_lead_is_queued_only_where_the_host_is_slower_than_the_gpu():
    from tritonforge.worker.timing import _Lead

    # A matmul of 1.5 ms launched in 50 us needs no lead; a 20 us kernel whose launch took
    # 100 us while the L2 flush takes 80 us needs 3 * 0.1 - 0.1 = 0.2 ms per call.
    lead = _Lead(TimingConfig(), [_estimate(1.5, 1.58, 0.05), _estimate(0.02, 0.1, 0.1)])
    assert lead.ms(0, 40) == 0 and lead.span(0) >= 1000
    assert abs(lead.ms(1, 10) - 2.0) < 1e-9
    # One lead covers at most lead_max_ms (20 ms): 100 calls, and a longer chunk is split.
    assert lead.span(1) == 100 and lead.ms(1, 500) == TimingConfig().lead_max_ms
    assert _Lead(TimingConfig(lead=0), [_estimate(0.02, 0.1, 0.1)]).ms(0, 10) == 0


def test_a_later_chunk_is_heated_as_long_as_its_own_calls_run():
    from tritonforge.worker.timing import heat_ms

    config = TimingConfig()
    assert heat_ms(config, True, 43, 0.2) == config.heat_ms  # a burst's first chunk: the whole heat
    assert abs(heat_ms(config, False, 7, 0.5) - 3.5) < 1e-9  # 7 calls of 0.5 ms to come
    assert heat_ms(config, False, 400, 2.0) == config.heat_ms  # never more than the first chunk's
