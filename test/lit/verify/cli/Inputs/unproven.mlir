// A kernel whose ring index comes from memory (tt.load): P5 "cannot prove", nothing violated (exit 3).
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem2 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 2>
"builtin.module"() ({
  "tt.func"() <{function_type = (i32, !tt.ptr<i32>) -> (), sym_name = "k", sym_visibility = "public"}> ({
  ^bb0(%n: i32, %p: !tt.ptr<i32>):
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %c2 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %c3 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %a = "ttg.local_alloc"() : () -> !ttg.memdesc<3x64x64xf32, #shared, #smem, mutable> loc("ring"("g.py":3:1))
    %i = "tt.load"(%p) : (!tt.ptr<i32>) -> i32
    %b = "ttg.memdesc_index"(%a, %i) : (!ttg.memdesc<3x64x64xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable> loc("g.py":9:1)
    "tt.return"() : () -> ()
  }) : () -> ()
}) {ttg.target = "cuda:100"} : () -> ()

