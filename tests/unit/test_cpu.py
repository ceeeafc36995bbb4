"""CPU time of local processes from /proc: this test process is one."""

import os
import time

from pgopt.target.cpu import children, process_cpu_s, tree_cpu_s


def test_cpu_time_of_this_process_grows_as_it_works() -> None:
    before = process_cpu_s(os.getpid())
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    after = process_cpu_s(os.getpid())
    assert before is not None and after is not None
    assert after - before >= 0.04
    tree = tree_cpu_s(os.getpid())
    assert tree is not None and tree >= 0.04


def test_a_process_that_is_gone_has_no_cpu_time() -> None:
    assert process_cpu_s(2**22 + 12345) is None
    assert tree_cpu_s(2**22 + 12345) is None
    assert children(2**22 + 12345) == []
