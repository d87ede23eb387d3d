import idebridge

NEW = "package main\n\nfunc main() {\n\tfromPython()\n}\n"

with idebridge.IDEClient.connect(timeout=10) as ide:  # the IDE whose workspace holds this directory
    before = ide.snapshot_diagnostics("main.go")
    res = ide.propose_edit("main.go", NEW)             # the user decides in the IDE's diff view
    print(res.status.value, res.written)               # accepted True
    print(ide.new_diagnostics(before).rendered)        # <new-diagnostics> ... undefined: fromPython
