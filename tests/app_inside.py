"""The app in the test's own process, serving copies of some traces: for tests that call
its pages and callbacks directly. Dash registers pages once per process, so every test
module shares the one app and points its catalog at a folder of its own."""
import shutil

from dashapp import app as app_module


def serving_copies(tmp_path_factory, paths, name):
    """(the app, a fresh folder named after ``name`` holding copies of ``paths``); the
    caller adds what else it wants there, then calls ``serve`` on the folder."""
    app = (app_module._created[0] if app_module._created
           else app_module.create_app(trace_dir=tmp_path_factory.mktemp("served")))
    directory = tmp_path_factory.mktemp(name)
    for path in paths:
        shutil.copy(path, directory / path.name)
    return app, directory


def serve(app, directory):
    """Make ``app``'s catalog list the traces in ``directory``; returns the app."""
    app.server.config["GPUSCOPE_CATALOG"].__init__(trace_dir=directory)
    return app
