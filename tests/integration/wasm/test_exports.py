import backends.wasm


def test_all_is_sorted_and_complete() -> None:
    names = backends.wasm.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in names:
        assert hasattr(backends.wasm, name)
