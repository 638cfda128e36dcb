; Call sites whose callee is a name or a dotted attribute chain: `f()`,
; `self.f()`, `mod.sub.f()`. Other shapes (`f()()`, `x[0]()`) name nothing we
; can resolve to a node, so they are not captured.
; Two capture names: the loop that reads them then needs no node's type.
(call function: (identifier) @name)
(call function: (attribute) @chain)
