"""CPU time of local processes from /proc: this test process is one."""

import os
import time

from pgopt.servers.cpu import children, consistent_tree_total, process_cpu_s, tree_cpu_s


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


def test_a_child_reaped_while_the_live_ones_are_listed_is_counted_once() -> None:
    # the parent has used 1 s; a child with 4 s is live, then reaped while listed
    parent = iter([1.0, 5.0, 5.0])
    listings = iter([[0.2], [0.2]])  # the reaped child has left the listing
    total = consistent_tree_total(lambda: next(parent), lambda: next(listings))
    assert total == 5.2


def test_a_tree_read_in_a_quiet_moment_is_the_parent_plus_its_live_children() -> None:
    assert consistent_tree_total(lambda: 1.0, lambda: [0.5, 0.25]) == 1.75
    assert consistent_tree_total(lambda: None, lambda: [0.5]) is None
