// An scf.for whose body has no induction variable (its `^bb0(%iv: i32)` line deleted, the carried ring
// index kept): generic text parses with scf unregistered; scf's verifier would reject it. The scf.for is at line 12 col 10.
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (i32) -> (), sym_name = "k", sym_visibility = "public"}> ({
  ^bb0(%n: i32):
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32 loc("k.py":3:5)
    %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32 loc("k.py":4:5)
    %c2 = "arith.constant"() <{value = 2 : i32}> : () -> i32 loc("k.py":5:5)
    %a = "ttg.local_alloc"() : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> loc("ring"("k.py":6:5))
    %r = "scf.for"(%c0, %n, %c1, %c0) ({
    ^bb0(%k: i32):
      %b = "ttg.memdesc_index"(%a, %k) : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable> loc("k.py":8:7)
      %k1 = "arith.addi"(%k, %c1) : (i32, i32) -> i32 loc("k.py":9:7)
      %k2 = "arith.remsi"(%k1, %c2) : (i32, i32) -> i32 loc("k.py":10:7)
      "scf.yield"(%k2) : (i32) -> ()
    }) : (i32, i32, i32, i32) -> i32 loc("k.py":7:5)
    "tt.return"() : () -> ()
  }) : () -> ()
}) {ttg.target = "cuda:100"} : () -> ()
