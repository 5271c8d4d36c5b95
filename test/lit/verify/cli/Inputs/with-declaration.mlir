// A kernel and a function declaration (a tt.func whose region is empty: no body, no memory). The kernel is
// checked; the declaration holds nothing to check (was: IndexError reading its missing block, reported as a
// tlx-verify bug).
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem_space = #ttng.tensor_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (i32) -> i32, sym_name = "ext", sym_visibility = "private"}> ({
  }) : () -> ()
  "tt.func"() <{function_type = (i32) -> (), sym_name = "k", sym_visibility = "public"}> ({
  ^bb0(%i: i32):
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32 loc("k.py":3:5)
    %a = "ttng.tmem_alloc"() : () -> !ttg.memdesc<2x128x64xf32, #tmem, #tmem_space, mutable> loc("acc"("k.py":4:5))
    %b = "ttg.memdesc_index"(%a, %c0) : (!ttg.memdesc<2x128x64xf32, #tmem, #tmem_space, mutable>, i32) -> !ttg.memdesc<128x64xf32, #tmem, #tmem_space, mutable> loc("k.py":5:5)
    "tt.return"() : () -> ()
  }) : () -> ()
}) {ttg.target = "cuda:100"} : () -> ()
