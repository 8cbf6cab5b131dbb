"""Calling a running app's callbacks over HTTP as the browser does: the request body is
built from the app's own ``/_dash-dependencies``, so a test names a callback by an output
and gives the values of its inputs and state (for crafted payloads too)."""
import json
import time
import urllib.error
import urllib.request

from dash._utils import split_callback_id


def dependencies(url):
    with urllib.request.urlopen(url + "/_dash-dependencies", timeout=60) as answer:
        return json.load(answer)


def _outputs(dep):
    found = split_callback_id(dep["output"])
    return found if isinstance(found, list) else [found]


def find(deps, output, trigger=None):
    """The callback whose outputs include ``output`` ("id.property") and, if given,
    whose inputs include ``trigger``."""
    for dep in deps:
        outs = [f"{o['id']}.{o['property'].split('@')[0]}"
                for o in _outputs(dep)]
        ins = [f"{i['id']}.{i['property']}" for i in dep["inputs"]]
        if output in outs and (trigger is None or trigger in ins):
            return dep
    raise LookupError(f"no callback with output {output} and input {trigger}")


def body(dep, values, changed=None):
    """The JSON body of a call of ``dep`` with ``values`` {"id.property": value}."""
    def items(specs):
        return [{"id": s["id"], "property": s["property"],
                 "value": values.get(f"{s['id']}.{s['property']}")} for s in specs]
    outputs = split_callback_id(dep["output"])
    inputs = items(dep["inputs"])
    return {"output": dep["output"], "outputs": outputs,
            "inputs": inputs, "state": items(dep["state"]),
            "changedPropIds": changed or [f"{inputs[0]['id']}.{inputs[0]['property']}"]}


def post(url, payload, timeout=60):
    """(HTTP status, seconds, decoded JSON or text) of one POST to the callback route."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    request = urllib.request.Request(url + "/_dash-update-component", data=data,
                                     headers={"Content-Type": "application/json"})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        status, text = err.code, err.read().decode(errors="replace")
    seconds = time.monotonic() - started
    try:
        return status, seconds, json.loads(text)
    except ValueError:
        return status, seconds, text


def open_page(url, deps, path, search=""):
    """(status, seconds, response) of building a page, as the page router does."""
    dep = find(deps, "_pages_content.children")
    return post(url, body(dep, {"_pages_location.pathname": path,
                                "_pages_location.search": search},
                          changed=["_pages_location.pathname"]))
