//go:build amd64 && !purego

#include "textflag.h"

// func sumWordsAsm(c *wordLoop, p1, p2 *byte, n int, out []uint64, sel *int32, k int, first int32) int
//
// Per candidate: t1 = mix(o1, f1 ^ x1·m1), t2 = mix(o2, f2 ^ x2·m2) with
// mix(a, b) the 128-bit product's halves xored; h = avalanche(avalanche(acc
// + t1) + acc2 + t2), avalanche(x) = (x ^ x>>37)·prime, then ^ >>32.
TEXT ·sumWordsAsm(SB), NOSPLIT, $0-88
	MOVQ c+0(FP), R8
	MOVQ p1+8(FP), SI
	MOVQ p2+16(FP), DI
	MOVQ n+24(FP), BX
	MOVQ out_base+32(FP), R9
	MOVQ out_len+40(FP), R13
	MOVQ sel+56(FP), R10
	MOVQ k+64(FP), R11
	MOVLQSX first+72(FP), R12
	TESTQ R13, R13
	JZ done

loop:
	// First round: acc + t1, avalanched into CX.
	MOVQ (SI), AX
	IMULQ 16(R8), AX
	XORQ 8(R8), AX
	MULQ 0(R8)
	XORQ DX, AX
	ADDQ 48(R8), AX
	MOVQ AX, DX
	SHRQ $37, DX
	XORQ DX, AX
	IMULQ 64(R8), AX
	MOVQ AX, CX
	SHRQ $32, CX
	XORQ AX, CX

	// Second round: CX + acc2 + t2, avalanched into AX.
	MOVQ (DI), AX
	IMULQ 40(R8), AX
	XORQ 32(R8), AX
	MULQ 24(R8)
	XORQ DX, AX
	ADDQ 56(R8), AX
	ADDQ CX, AX
	MOVQ AX, DX
	SHRQ $37, DX
	XORQ DX, AX
	IMULQ 64(R8), AX
	MOVQ AX, DX
	SHRQ $32, DX
	XORQ DX, AX

	MOVQ AX, (R9)
	MOVL R12, (R10)(R11*4)
	CMPQ AX, 72(R8)  // carry when h < cut
	SBBQ $-1, R11    // k += 1 - carry
	ADDQ BX, SI
	ADDQ BX, DI
	ADDQ $8, R9
	INCQ R12
	DECQ R13
	JNZ loop

done:
	MOVQ R11, ret+80(FP)
	RET
