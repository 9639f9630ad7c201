#!/usr/bin/env python3
"""A runner whose decisions come from a model behind the coordbench proxy.

For each active agent it POSTs the agent's payload (the shape of
llmctl.UserMessage) to $COORDBENCH_LLM_BASE_URL/chat/completions and plays
the model's {"action": N}; when the call fails (the proxy answers an
error), it plays the agent's first legal action, its own choice, as a
runner with a fallback of its own would. Standard library only. It prints the names of
its environment variables to stderr (a test checks that the real API key
never reaches the runner).
"""
import json
import os
import sys
import urllib.error
import urllib.request

BASE = os.environ["COORDBENCH_LLM_BASE_URL"]
KEY = os.environ.get("OPENAI_API_KEY", "")
sys.stderr.write("proxy_runner env: " + " ".join(sorted(os.environ)) + "\n")
sys.stderr.write("proxy_runner key: " + KEY + "\n")


def ask(view):
    msg = {
        "agent": view["agent_id"], "role": view["role"], "kind": view["kind"],
        "legal_actions": view["legal_actions"], "decision_factors": view["decision_factors"],
        "options": view["options"], "context": view["context"], "observation": view["observation"],
    }
    body = json.dumps({
        "model": "stub-model", "temperature": 0, "max_tokens": 16,
        "messages": [{"role": "system", "content": "Reply {\"action\": N}."},
                     {"role": "user", "content": json.dumps(msg)}],
    }).encode()
    req = urllib.request.Request(BASE + "/chat/completions", data=body, method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + KEY})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            resp = json.load(r)
    except urllib.error.HTTPError as e:
        sys.stderr.write("proxy_runner: model call failed (%d); playing the first legal action\n" % e.code)
        return view["legal_actions"][0]
    return json.loads(resp["choices"][0]["message"]["content"])["action"]


for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "proxy_runner.py", "model": "stub-model"}), flush=True)
    elif m["type"] == "decision":
        p = m["payload"]
        acts = {a: ask(v) for a, v in sorted(p["active_agents"].items())}
        print(json.dumps({"step": p["step"], "actions": acts}), flush=True)
    elif m["type"] == "episode_end":
        break
