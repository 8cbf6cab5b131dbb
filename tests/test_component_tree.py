"""The component hierarchy read from dotted location names (the Overview's tree)."""
import re

from dashapp.daisen.tree import component_tree, subtree_filter, tree_data

NAMES = ["GPU.SA[10].CU[40]", "GPU.SA[2].CU[8]", "GPU.SA[2].CU[8].SIMD[1]", "GPU.L2[0]",
         "GPU.SA[2].CU[9]", "Driver", "GPU.L2[0.5]"]


def _paths(nodes):
    return [n.path for n in nodes]


def test_dotted_names_form_a_tree_in_natural_order_with_counts():
    roots = component_tree(NAMES)
    assert _paths(roots) == ["Driver", "GPU"]
    gpu = roots[1]
    assert not gpu.component and gpu.count == 6
    # A dot inside brackets does not split: L2[0.5] is one component.
    assert _paths(gpu.children) == ["GPU.L2[0.5]", "GPU.L2[0]", "GPU.SA[2]", "GPU.SA[10]"]
    sa2 = gpu.children[2]
    assert sa2.count == 3 and _paths(sa2.children) == ["GPU.SA[2].CU[8]", "GPU.SA[2].CU[9]"]
    cu8 = sa2.children[0]
    # A component that is also a parent: CU[8] and its SIMD[1].
    assert cu8.component and _paths(cu8.children) == ["GPU.SA[2].CU[8].SIMD[1]"]


def test_a_subtree_filter_matches_the_node_and_everything_below_it_only():
    pattern = re.compile(subtree_filter("GPU.SA[2].CU[8]"))
    matched = [n for n in NAMES if pattern.search(n)]
    assert matched == ["GPU.SA[2].CU[8]", "GPU.SA[2].CU[8].SIMD[1]"]
    data = tree_data(component_tree(["A.B", "A.C"]))
    assert data == [["A", "A", subtree_filter("A"), False, 2,
                     [["B", "A.B", subtree_filter("A.B"), True, 1, []],
                      ["C", "A.C", subtree_filter("A.C"), True, 1, []]]]]
