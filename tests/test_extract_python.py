"""Python extractor: definitions, imports, calls, contexts, env reads, strings."""

from __future__ import annotations

import textwrap

from apxtui.facts import CallSite, FileFacts
from apxtui.parse import extract_file

FILE = "python/apxinf/policy.py"
MOD = "apxinf.policy"


def ex(src: str, rel: str = FILE, module: str = MOD) -> FileFacts:
    return extract_file(rel, textwrap.dedent(src).encode(), "python", module)


def defs(f: FileFacts) -> dict:
    return {d.qualname: d for d in f.defs}


def call(f: FileFacts, callee: str) -> CallSite:
    found = [c for c in f.calls if c.callee == callee]
    assert len(found) == 1, (callee, [c.callee for c in f.calls])
    return found[0]


def ctx(c: CallSite) -> list[tuple[str, str, int]]:
    return [(x.kind, x.text, x.arm) for x in c.contexts]


# -- definitions -------------------------------------------------------------------


def test_functions_methods_and_nested_defs_are_qualified():
    f = ex(
        """
        def top(a, b: int = 2, *args, c: str, **kw) -> None:
            def inner():
                pass

        class Outer(Base, metaclass=Meta):
            class Inner:
                def m(self):
                    pass

            @staticmethod
            @functools.cache
            async def run(x: "Tensor") -> "Tensor":
                pass
        """
    )
    d = defs(f)
    assert set(d) == {
        "apxinf.policy.top",
        "apxinf.policy.top.inner",
        "apxinf.policy.Outer",
        "apxinf.policy.Outer.Inner",
        "apxinf.policy.Outer.Inner.m",
        "apxinf.policy.Outer.run",
    }
    top = d["apxinf.policy.top"]
    assert top.kind == "python_fn" and top.container == "" and top.return_type == "None"
    assert [(p.name, p.type, p.default) for p in top.params] == [
        ("a", "", ""),
        ("b", "int", "2"),
        ("*args", "", ""),
        ("c", "str", ""),
        ("**kw", "", ""),
    ]
    assert (top.line, top.end_line) == (2, 4)
    assert d["apxinf.policy.top.inner"].container == ""
    outer = d["apxinf.policy.Outer"]
    assert outer.kind == "python_class" and outer.attrs["bases"] == ["Base", "metaclass=Meta"]
    assert d["apxinf.policy.Outer.Inner.m"].container == "Inner"
    run = d["apxinf.policy.Outer.run"]
    assert run.container == "Outer" and run.attrs["async"] is True
    assert run.attrs["decorators"] == ["staticmethod", "functools.cache"]
    assert run.line == 13  # the `def` line, not the first decorator
    assert "async" not in top.attrs and "decorators" not in top.attrs


def test_init_module_qualnames_use_package():
    f = ex("def f():\n    pass\n", rel="python/apxinf/__init__.py", module="apxinf")
    assert [d.qualname for d in f.defs] == ["apxinf.f"]


def test_class_fields_from_self_assignments_and_annotations():
    f = ex(
        """
        class Policy:
            name: str = "pi05"
            steps: int

            def __init__(self, path, backend: "Backend"):
                self.runner = apxinf_py.ModelRunner(path)
                self.backend = backend
                self.dtype: torch.dtype = pick(path)
                self.count = 0
                local = Other()

            def load(this):
                this.weights = load_weights(this.path)

            @staticmethod
            def helper(x):
                x.not_a_field = Thing()
        """
    )
    pol = defs(f)["apxinf.policy.Policy"]
    assert pol.fields == {
        "name": "str",
        "steps": "int",
        "runner": "apxinf_py.ModelRunner",
        "backend": '"Backend"',
        "dtype": "torch.dtype",
        "weights": "load_weights",
    }
    assert defs(f)["apxinf.policy.Policy.__init__"].locals == {"local": "Other"}


def test_locals_from_calls_annotations_and_with():
    f = ex(
        """
        async def run(cfg: Config):
            runner = apxinf_py.ModelRunner(cfg.path)
            n: int = compute()
            same = cfg
            model = await load_model(cfg)
            with torch.cuda.graph(g) as graph, lock:
                pass
            runner = something_else()
            def inner():
                hidden = Hidden()
        """
    )
    d = defs(f)
    assert d["apxinf.policy.run"].locals == {
        "runner": "apxinf_py.ModelRunner",
        "n": "int",
        "same": "Config",
        "model": "load_model",
        "graph": "torch.cuda.graph",
    }
    assert d["apxinf.policy.run.inner"].locals == {"hidden": "Hidden"}


# -- imports -------------------------------------------------------------------------


def imports(f: FileFacts) -> list[tuple[str, str, str]]:
    return [(i.path, i.alias, i.scope) for i in f.imports]


def test_absolute_import_forms():
    f = ex(
        """
        import os
        import a.b
        import a.b as c, d
        from a.b import f as g, h
        from a import *
        from __future__ import annotations

        def fn():
            import torch.nn as nn
        """
    )
    assert imports(f) == [
        ("os", "os", ""),
        ("a.b", "a.b", ""),
        ("a.b", "c", ""),
        ("d", "d", ""),
        ("a.b.f", "g", ""),
        ("a.b.h", "h", ""),
        ("a", "*", ""),
        ("torch.nn", "nn", "apxinf.policy.fn"),
    ]
    assert all(i.kind == "import" and i.file == FILE for i in f.imports)
    assert [i.line for i in f.imports] == [2, 3, 4, 4, 5, 5, 6, 10]


def test_relative_imports_in_submodule():
    f = ex(
        """
        from . import backend
        from .models import pi05 as p
        from ..top import thing
        from .. import outer
        from ...too_far import x
        """,
        rel="python/apxinf/sub/mod.py",
        module="apxinf.sub.mod",
    )
    assert [(i.path, i.alias) for i in f.imports] == [
        ("apxinf.sub.backend", "backend"),
        ("apxinf.sub.models.pi05", "p"),
        ("apxinf.top.thing", "thing"),
        ("apxinf.outer", "outer"),
        ("...too_far.x", "x"),  # beyond the top-level package: kept as written
    ]


def test_relative_imports_in_package_init():
    f = ex(
        """
        from . import x
        from .policy import AutoPolicy
        from .. import up
        from .m import *
        """,
        rel="python/apxinf/sub/__init__.py",
        module="apxinf.sub",
    )
    assert [(i.path, i.alias) for i in f.imports] == [
        ("apxinf.sub.x", "x"),
        ("apxinf.sub.policy.AutoPolicy", "AutoPolicy"),
        ("apxinf.up", "up"),
        ("apxinf.sub.m", "*"),
    ]


# -- calls ---------------------------------------------------------------------------


def test_call_kinds_receivers_and_args():
    f = ex(
        """
        def go(self, i, obs):
            f(x, *rest, key=val, **kw)
            a.b.c(1)
            self.runner.infer(obs)
            self.blocks[i].forward(obs)
            get()().x()
            super().__init__()
            fns[i](obs)
            total(v for v in obs)

        setup(__name__)
        """
    )
    c = call(f, "f")
    assert (c.kind, c.path, c.receiver, c.caller) == ("call", ["f"], "", "apxinf.policy.go")
    assert c.args == ["x", "*rest", "key=val", "**kw"]
    assert c.text == "f(x, *rest, key=val, **kw)" and c.line == 3 and c.col == 4
    c = call(f, "a.b.c")
    assert (c.kind, c.path, c.receiver) == ("method", ["a", "b", "c"], "a.b")
    c = call(f, "self.runner.infer")
    assert (c.kind, c.path, c.receiver, c.args) == (
        "method",
        ["self", "runner", "infer"],
        "self.runner",
        ["obs"],
    )
    c = call(f, "self.blocks[i].forward")
    assert (c.kind, c.path, c.receiver) == ("method", ["self.blocks[i]", "forward"], "self.blocks[i]")
    c = call(f, "get()().x")
    assert (c.kind, c.path, c.receiver) == ("method", ["get()()", "x"], "get()()")
    assert call(f, "get()").kind == "call" and call(f, "get").kind == "call"
    assert call(f, "super().__init__").receiver == "super()"
    assert call(f, "fns[i]").path == ["fns[i]"]
    assert call(f, "total").args == ["v for v in obs"]
    assert call(f, "setup").caller == ""


def test_long_call_text_and_args_are_truncated():
    arg = "x" * 300
    f = ex(f"f({arg}, {arg})\n")
    c = call(f, "f")
    assert len(c.text) == 200 and c.text.endswith("…")
    assert all(len(a) <= 120 for a in c.args) and len(c.args) == 2


def test_decorator_and_default_calls_belong_to_the_enclosing_scope():
    f = ex(
        """
        class A:
            @register("x")
            def m(self, n=default_n()):
                body()
        """
    )
    assert call(f, "register").caller == "apxinf.policy.A"
    assert call(f, "default_n").caller == "apxinf.policy.A"
    assert call(f, "body").caller == "apxinf.policy.A.m"


# -- contexts ------------------------------------------------------------------------


def test_if_elif_else_chain():
    f = ex(
        """
        def run(mode, x):
            if mode == "graph":
                graph_run(x)
            elif mode in (
                "eager", "fast"):
                eager_run(x)
            elif check():
                check_run(x)
            else:
                fallback(x)
            plain(x)
        """
    )
    g = call(f, "graph_run").contexts
    assert [(c.kind, c.text, c.arm, c.negated) for c in g] == [("if", 'mode == "graph"', 0, [])]
    e = call(f, "eager_run").contexts[0]
    assert (e.kind, e.text, e.arm, e.negated) == ("if", 'mode in ( "eager", "fast")', 1, ['mode == "graph"'])
    fb = call(f, "fallback").contexts[0]
    assert (fb.kind, fb.text, fb.arm) == ("else", "else", 3)
    assert fb.negated == ['mode == "graph"', 'mode in ( "eager", "fast")', "check()"]
    assert len({c.group for c in (g[0], e, fb)}) == 1 and g[0].group == "3:4"
    # a call in an elif condition runs only when the earlier conditions were false
    ch = call(f, "check").contexts[0]
    assert (ch.kind, ch.arm, ch.negated) == ("else", 2, ['mode == "graph"', 'mode in ( "eager", "fast")'])
    assert call(f, "plain").contexts == []


def test_nested_contexts_are_outermost_first_and_stop_at_the_function():
    f = ex(
        """
        def outer(xs):
            for x in xs:
                if x:
                    def inner():
                        while ready():
                            work()
                    inner()
        """
    )
    assert ctx(call(f, "inner")) == [("loop", "for x in xs", -1), ("if", "x", 0)]
    assert ctx(call(f, "work")) == [("loop", "while ready()", -1)]
    assert ctx(call(f, "ready")) == [("loop", "while ready()", -1)]


def test_loop_header_iterable_and_loop_else_are_outside_the_loop():
    f = ex(
        """
        def run():
            for i in items():
                step(i)
            else:
                done()
        """
    )
    assert ctx(call(f, "step")) == [("loop", "for i in items()", -1)]
    assert call(f, "items").contexts == [] and call(f, "done").contexts == []


def test_match_case():
    f = ex(
        """
        def dispatch(cfg):
            match cfg.kind:
                case "pi05" if cfg.fast:
                    fast()
                case Pi0(version=2):
                    v2()
                case _:
                    other()
        """
    )
    a = call(f, "fast").contexts[0]
    assert (a.kind, a.text, a.arm, a.subject) == ("match_arm", '"pi05" if cfg.fast', 0, "cfg.kind")
    b = call(f, "v2").contexts[0]
    assert (b.text, b.arm, b.group) == ("Pi0(version=2)", 1, a.group)
    assert ctx(call(f, "other")) == [("match_arm", "_", 2)]


def test_comprehension_conditional_lambda_and_except():
    f = ex(
        """
        def run(xs, ys, c):
            out = [f(x, y) for x in xs if keep(x) for y in ys]
            pick = a() if c else b()
            cb = lambda q, r=dflt(): handle(q)
            try:
                risky()
            except (KeyError, ValueError) as e:
                recover(e)
            except Exception:
                last()
            finally:
                cleanup()
        """
    )
    assert ctx(call(f, "f")) == [
        ("loop", "for x in xs", -1),
        ("if", "keep(x)", 0),
        ("loop", "for y in ys", -1),
    ]
    assert ctx(call(f, "keep")) == [("loop", "for x in xs", -1)]
    assert ctx(call(f, "a")) == [("if", "c", 0)]
    b = call(f, "b").contexts
    assert [(c.kind, c.arm, c.negated) for c in b] == [("else", 1, ["c"])]
    assert ctx(call(f, "handle")) == [("closure", "lambda q, r=dflt()", -1)]
    assert call(f, "dflt").contexts == []
    assert call(f, "risky").contexts == [] and call(f, "cleanup").contexts == []
    r = call(f, "recover").contexts
    assert [(c.kind, c.text, c.arm) for c in r] == [("except", "except (KeyError, ValueError) as e", 0)]
    assert ctx(call(f, "last")) == [("except", "except Exception", 1)]
    assert r[0].group == call(f, "last").contexts[0].group == "6:4"


# -- environment ---------------------------------------------------------------------


def test_env_reads_with_defaults():
    f = ex(
        """
        import os
        from os import environ, getenv

        A = os.environ["APX_A"]

        def read():
            b = os.environ.get("APX_B", "1")
            c = os.getenv("APX_C")
            d = environ.get("APX_D", default_d())
            e = getenv("APX_E", default="x")
            present = "APX_F" in os.environ
            os.environ["APX_WRITE"] = "1"
            other.environ.get("NOT_ENV")
        """
    )
    got = {(r.name, r.default, r.caller) for r in f.env_reads}
    assert got == {
        ("APX_A", "", ""),
        ("APX_B", '"1"', "apxinf.policy.read"),
        ("APX_C", "", "apxinf.policy.read"),
        ("APX_D", "default_d()", "apxinf.policy.read"),
        ("APX_E", '"x"', "apxinf.policy.read"),
        ("APX_F", "", "apxinf.policy.read"),
    }
    b = next(r for r in f.env_reads if r.name == "APX_B")
    assert b.text == 'os.environ.get("APX_B", "1")' and b.line == 8


def test_bare_environ_needs_an_import_from_os():
    f = ex('environ.get("X")\ngetenv("Y")\n')
    assert f.env_reads == []
    f = ex('import os as _os\n_os.environ.get("X")\n')
    assert [r.name for r in f.env_reads] == ["X"]


def test_env_name_from_module_constant():
    f = ex('import os\nKEY = "APX_KEY"\nv = os.getenv(KEY)\n')
    assert [r.name for r in f.env_reads] == ["APX_KEY"]


def test_env_in_conditions_direct_and_via_locals():
    f = ex(
        """
        import os
        USE_GRAPH = os.getenv("APX_GRAPH", "0") == "1"

        class P:
            def __init__(self):
                self.fast = os.environ.get("APX_FAST")

            def run(self, x):
                if os.environ.get("APX_DIRECT"):
                    direct(x)
                mode = os.getenv("APX_MODE")
                kind = mode.lower()
                if kind == "a":
                    a(x)
                elif USE_GRAPH:
                    g(x)
                while self.fast:
                    spin()
                if "APX_SET" in os.environ:
                    s()
                if x:
                    plain()

            def early(self):
                if mode:
                    before()
                mode = os.getenv("APX_LATE")
        """
    )
    assert call(f, "direct").contexts[0].env == ["APX_DIRECT"]
    assert call(f, "a").contexts[0].env == ["APX_MODE"]
    assert call(f, "g").contexts[0].env == ["APX_GRAPH", "APX_MODE"]
    assert call(f, "spin").contexts[0].env == ["APX_FAST"]
    assert call(f, "s").contexts[0].env == ["APX_SET"]
    assert call(f, "plain").contexts[0].env == []
    assert call(f, "before").contexts[0].env == []  # assigned only after the condition


# -- strings ------------------------------------------------------------------------


def test_tensor_name_strings():
    f = ex(
        '''
        def load(i, w):
            """Load weights. Docstrings are not names."""
            a = w[f"model.layers.{i}.self_attn.q_proj.weight"]
            b = w["lm_head.weight"]
            c = "layers.{}.mlp".format(i)
            d = "layers.%d.norm" % (i,)
            skip = ["has space.x", "plain", b"bytes.x", "..."]
        '''
    )
    got = {s["text"]: s for s in f.strings}
    assert set(got) == {
        "model.layers.{i}.self_attn.q_proj.weight",
        "lm_head.weight",
        "layers.{}.mlp",
        "layers.%d.norm",
    }
    fs = got["model.layers.{i}.self_attn.q_proj.weight"]
    assert (fs["macro"], fs["line"], fs["caller"], fs["args"]) == ("fstring", 4, "apxinf.policy.load", [])
    assert got["lm_head.weight"]["macro"] == ""
    assert (got["layers.{}.mlp"]["macro"], got["layers.{}.mlp"]["args"]) == ("format", ["i"])
    assert (got["layers.%d.norm"]["macro"], got["layers.%d.norm"]["args"]) == ("percent", ["i"])


# -- robustness ---------------------------------------------------------------------


def test_syntax_error_keeps_defs_and_reports_issue():
    f = ex(
        """
        def good():
            helper()

        def broken(:
            pass

        class Later:
            def m(self):
                pass
        """
    )
    names = {d.qualname for d in f.defs}
    assert {"apxinf.policy.good", "apxinf.policy.Later", "apxinf.policy.Later.m"} <= names
    assert call(f, "helper").caller == "apxinf.policy.good"
    assert [i.kind for i in f.issues] == ["syntax"]


def test_facts_round_trip_through_dict():
    f = ex("import os\nif os.getenv('X'):\n    run(f'a.{b}')\n")
    assert FileFacts.from_dict(f.to_dict()) == f
