/* LLVM's C API through a table of pointers.  libLLVM is not linked: the
 * native tier opens it with dlopen when it first starts (weft__llvm_load,
 * from trace/llvm/engine.c), so a program that never compiles native code
 * never loads LLVM, whose start (its static constructors, and the
 * relocation of a 117 MB library) took about 50 ms of every weft
 * program's start, and 130 ms of every criterion test's process.
 *
 * The sources of the native tier include this header after LLVM's own
 * and call LLVM's functions by their usual names: each name below is a
 * macro for its pointer in the table.  A function called without a line
 * here does not link (libweft has no LLVM to resolve it); one listed but
 * not declared by the headers included here does not compile.
 *
 * The table is written once, by weft__llvm_load, before the compile
 * thread starts, and only read after. */
#ifndef WEFT_TRACE_LLVM_API_H
#define WEFT_TRACE_LLVM_API_H

#include <stddef.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* Every function of LLVM's C API weft calls. */
#define WEFT__LLVM_FUNCTIONS(X)                                                        \
    X(LLVMAddAttributeAtIndex)                                                         \
    X(LLVMAddCallSiteAttribute)                                                        \
    X(LLVMAddFunction)                                                                 \
    X(LLVMAddIncoming)                                                                 \
    X(LLVMAppendBasicBlockInContext)                                                   \
    X(LLVMBuildAShr)                                                                   \
    X(LLVMBuildAdd)                                                                    \
    X(LLVMBuildAlloca)                                                                 \
    X(LLVMBuildAnd)                                                                    \
    X(LLVMBuildBr)                                                                     \
    X(LLVMBuildCall2)                                                                  \
    X(LLVMBuildCondBr)                                                                 \
    X(LLVMBuildFAdd)                                                                   \
    X(LLVMBuildFCmp)                                                                   \
    X(LLVMBuildFDiv)                                                                   \
    X(LLVMBuildFMul)                                                                   \
    X(LLVMBuildFNeg)                                                                   \
    X(LLVMBuildFPExt)                                                                  \
    X(LLVMBuildFPToSI)                                                                 \
    X(LLVMBuildFPTrunc)                                                                \
    X(LLVMBuildFSub)                                                                   \
    X(LLVMBuildFence)                                                                  \
    X(LLVMBuildFreeze)                                                                 \
    X(LLVMBuildICmp)                                                                   \
    X(LLVMBuildInBoundsGEP2)                                                           \
    X(LLVMBuildInsertElement)                                                          \
    X(LLVMBuildLShr)                                                                   \
    X(LLVMBuildLoad2)                                                                  \
    X(LLVMBuildMul)                                                                    \
    X(LLVMBuildNSWAdd)                                                                 \
    X(LLVMBuildNSWMul)                                                                 \
    X(LLVMBuildNSWSub)                                                                 \
    X(LLVMBuildNeg)                                                                    \
    X(LLVMBuildNot)                                                                    \
    X(LLVMBuildOr)                                                                     \
    X(LLVMBuildPhi)                                                                    \
    X(LLVMBuildPtrToInt)                                                               \
    X(LLVMBuildRetVoid)                                                                \
    X(LLVMBuildSDiv)                                                                   \
    X(LLVMBuildSExt)                                                                   \
    X(LLVMBuildSIToFP)                                                                 \
    X(LLVMBuildSRem)                                                                   \
    X(LLVMBuildSelect)                                                                 \
    X(LLVMBuildShl)                                                                    \
    X(LLVMBuildShuffleVector)                                                          \
    X(LLVMBuildStore)                                                                  \
    X(LLVMBuildSub)                                                                    \
    X(LLVMBuildTrunc)                                                                  \
    X(LLVMBuildUIToFP)                                                                 \
    X(LLVMBuildXor)                                                                    \
    X(LLVMBuildZExt)                                                                   \
    X(LLVMConstInt)                                                                    \
    X(LLVMConstIntToPtr)                                                               \
    X(LLVMConstNull)                                                                   \
    X(LLVMConstReal)                                                                   \
    X(LLVMConstVector)                                                                 \
    X(LLVMConsumeError)                                                                \
    X(LLVMContextCreate)                                                               \
    X(LLVMContextDispose)                                                              \
    X(LLVMCreateBuilderInContext)                                                      \
    X(LLVMCreateEnumAttribute)                                                         \
    X(LLVMCreatePassBuilderOptions)                                                    \
    X(LLVMCreateTargetDataLayout)                                                      \
    X(LLVMCreateTargetMachine)                                                         \
    X(LLVMDisposeBuilder)                                                              \
    X(LLVMDisposeErrorMessage)                                                         \
    X(LLVMDisposeMemoryBuffer)                                                         \
    X(LLVMDisposeMessage)                                                              \
    X(LLVMDisposeModule)                                                               \
    X(LLVMDisposePassBuilderOptions)                                                   \
    X(LLVMDisposeTargetData)                                                           \
    X(LLVMDisposeTargetMachine)                                                        \
    X(LLVMDoubleTypeInContext)                                                         \
    X(LLVMFloatTypeInContext)                                                          \
    X(LLVMFunctionType)                                                                \
    X(LLVMGetDefaultTargetTriple)                                                      \
    X(LLVMGetElementType)                                                              \
    X(LLVMGetEntryBasicBlock)                                                          \
    X(LLVMGetEnumAttributeKindForName)                                                 \
    X(LLVMGetErrorMessage)                                                             \
    X(LLVMGetFirstInstruction)                                                         \
    X(LLVMGetHostCPUFeatures)                                                          \
    X(LLVMGetHostCPUName)                                                              \
    X(LLVMGetInsertBlock)                                                              \
    X(LLVMGetIntrinsicDeclaration)                                                     \
    X(LLVMGetMDKindIDInContext)                                                        \
    X(LLVMGetModuleContext)                                                            \
    X(LLVMGetParam)                                                                    \
    X(LLVMGetPoison)                                                                   \
    X(LLVMGetTargetFromTriple)                                                         \
    X(LLVMGetTypeKind)                                                                 \
    X(LLVMInt1TypeInContext)                                                           \
    X(LLVMInt32TypeInContext)                                                          \
    X(LLVMInt64TypeInContext)                                                          \
    X(LLVMInt8TypeInContext)                                                           \
    X(LLVMIntrinsicGetType)                                                            \
    X(LLVMIsConstant)                                                                  \
    X(LLVMLookupIntrinsicID)                                                           \
    X(LLVMMDNodeInContext2)                                                            \
    X(LLVMMDStringInContext2)                                                          \
    X(LLVMMetadataAsValue)                                                             \
    X(LLVMMetadataReplaceAllUsesWith)                                                  \
    X(LLVMModuleCreateWithNameInContext)                                               \
    X(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess)                            \
    X(LLVMOrcCreateLLJIT)                                                              \
    X(LLVMOrcCreateLLJITBuilder)                                                       \
    X(LLVMOrcDisposeLLJIT)                                                             \
    X(LLVMOrcExecutionSessionSetErrorReporter)                                         \
    X(LLVMOrcJITDylibAddGenerator)                                                     \
    X(LLVMOrcJITDylibCreateResourceTracker)                                            \
    X(LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine)                           \
    X(LLVMOrcLLJITAddObjectFileWithRT)                                                 \
    X(LLVMOrcLLJITBuilderSetJITTargetMachineBuilder)                                   \
    X(LLVMOrcLLJITGetExecutionSession)                                                 \
    X(LLVMOrcLLJITGetGlobalPrefix)                                                     \
    X(LLVMOrcLLJITGetMainJITDylib)                                                     \
    X(LLVMOrcLLJITLookup)                                                              \
    X(LLVMOrcReleaseResourceTracker)                                                   \
    X(LLVMOrcResourceTrackerRemove)                                                    \
    X(LLVMPassBuilderOptionsSetLoopUnrolling)                                          \
    X(LLVMPassBuilderOptionsSetLoopVectorization)                                      \
    X(LLVMPassBuilderOptionsSetSLPVectorization)                                       \
    X(LLVMPointerTypeInContext)                                                        \
    X(LLVMPositionBuilderAtEnd)                                                        \
    X(LLVMPositionBuilderBefore)                                                       \
    X(LLVMRunPasses)                                                                   \
    X(LLVMSetAlignment)                                                                \
    X(LLVMSetMetadata)                                                                 \
    X(LLVMSetModuleDataLayout)                                                         \
    X(LLVMSetTarget)                                                                   \
    X(LLVMTargetMachineEmitToMemoryBuffer)                                             \
    X(LLVMTemporaryMDNode)                                                             \
    X(LLVMTypeOf)                                                                      \
    X(LLVMValueAsMetadata)                                                             \
    X(LLVMVectorType)                                                                  \
    X(LLVMVerifyModule)                                                                \
    X(LLVMVoidTypeInContext)

struct weft__llvm_api {
#define WEFT__LLVM_FIELD(name) __typeof__(name) *name;
    WEFT__LLVM_FUNCTIONS(WEFT__LLVM_FIELD)
#undef WEFT__LLVM_FIELD
    /* The native target's initializers, whose names depend on the host
     * (LLVMInitializeNativeTarget is an inline function of the headers
     * that calls them by name). */
    void (*init_target_info)(void);
    void (*init_target)(void);
    void (*init_target_mc)(void);
    void (*init_asm_printer)(void);
};

extern struct weft__llvm_api weft__llvm;

/* Opens libLLVM and fills the table; then 0.  On failure (no such
 * library, a function missing) WEFT_EINVAL, with the reason in err, and
 * the native tier stays off: every group runs on the interpreter.  The
 * first call decides; later ones return its result.  Called by one thread
 * at a time (the one that starts the native tier). */
int weft__llvm_load(char *err, size_t n);

#ifndef WEFT__LLVM_LOADER
#define LLVMAddAttributeAtIndex (weft__llvm.LLVMAddAttributeAtIndex)
#define LLVMAddCallSiteAttribute (weft__llvm.LLVMAddCallSiteAttribute)
#define LLVMAddFunction (weft__llvm.LLVMAddFunction)
#define LLVMAddIncoming (weft__llvm.LLVMAddIncoming)
#define LLVMAppendBasicBlockInContext (weft__llvm.LLVMAppendBasicBlockInContext)
#define LLVMBuildAShr (weft__llvm.LLVMBuildAShr)
#define LLVMBuildAdd (weft__llvm.LLVMBuildAdd)
#define LLVMBuildAlloca (weft__llvm.LLVMBuildAlloca)
#define LLVMBuildAnd (weft__llvm.LLVMBuildAnd)
#define LLVMBuildBr (weft__llvm.LLVMBuildBr)
#define LLVMBuildCall2 (weft__llvm.LLVMBuildCall2)
#define LLVMBuildCondBr (weft__llvm.LLVMBuildCondBr)
#define LLVMBuildFAdd (weft__llvm.LLVMBuildFAdd)
#define LLVMBuildFCmp (weft__llvm.LLVMBuildFCmp)
#define LLVMBuildFDiv (weft__llvm.LLVMBuildFDiv)
#define LLVMBuildFMul (weft__llvm.LLVMBuildFMul)
#define LLVMBuildFNeg (weft__llvm.LLVMBuildFNeg)
#define LLVMBuildFPExt (weft__llvm.LLVMBuildFPExt)
#define LLVMBuildFPToSI (weft__llvm.LLVMBuildFPToSI)
#define LLVMBuildFPTrunc (weft__llvm.LLVMBuildFPTrunc)
#define LLVMBuildFSub (weft__llvm.LLVMBuildFSub)
#define LLVMBuildFence (weft__llvm.LLVMBuildFence)
#define LLVMBuildFreeze (weft__llvm.LLVMBuildFreeze)
#define LLVMBuildICmp (weft__llvm.LLVMBuildICmp)
#define LLVMBuildInBoundsGEP2 (weft__llvm.LLVMBuildInBoundsGEP2)
#define LLVMBuildInsertElement (weft__llvm.LLVMBuildInsertElement)
#define LLVMBuildLShr (weft__llvm.LLVMBuildLShr)
#define LLVMBuildLoad2 (weft__llvm.LLVMBuildLoad2)
#define LLVMBuildMul (weft__llvm.LLVMBuildMul)
#define LLVMBuildNSWAdd (weft__llvm.LLVMBuildNSWAdd)
#define LLVMBuildNSWMul (weft__llvm.LLVMBuildNSWMul)
#define LLVMBuildNSWSub (weft__llvm.LLVMBuildNSWSub)
#define LLVMBuildNeg (weft__llvm.LLVMBuildNeg)
#define LLVMBuildNot (weft__llvm.LLVMBuildNot)
#define LLVMBuildOr (weft__llvm.LLVMBuildOr)
#define LLVMBuildPhi (weft__llvm.LLVMBuildPhi)
#define LLVMBuildPtrToInt (weft__llvm.LLVMBuildPtrToInt)
#define LLVMBuildRetVoid (weft__llvm.LLVMBuildRetVoid)
#define LLVMBuildSDiv (weft__llvm.LLVMBuildSDiv)
#define LLVMBuildSExt (weft__llvm.LLVMBuildSExt)
#define LLVMBuildSIToFP (weft__llvm.LLVMBuildSIToFP)
#define LLVMBuildSRem (weft__llvm.LLVMBuildSRem)
#define LLVMBuildSelect (weft__llvm.LLVMBuildSelect)
#define LLVMBuildShl (weft__llvm.LLVMBuildShl)
#define LLVMBuildShuffleVector (weft__llvm.LLVMBuildShuffleVector)
#define LLVMBuildStore (weft__llvm.LLVMBuildStore)
#define LLVMBuildSub (weft__llvm.LLVMBuildSub)
#define LLVMBuildTrunc (weft__llvm.LLVMBuildTrunc)
#define LLVMBuildUIToFP (weft__llvm.LLVMBuildUIToFP)
#define LLVMBuildXor (weft__llvm.LLVMBuildXor)
#define LLVMBuildZExt (weft__llvm.LLVMBuildZExt)
#define LLVMConstInt (weft__llvm.LLVMConstInt)
#define LLVMConstIntToPtr (weft__llvm.LLVMConstIntToPtr)
#define LLVMConstNull (weft__llvm.LLVMConstNull)
#define LLVMConstReal (weft__llvm.LLVMConstReal)
#define LLVMConstVector (weft__llvm.LLVMConstVector)
#define LLVMConsumeError (weft__llvm.LLVMConsumeError)
#define LLVMContextCreate (weft__llvm.LLVMContextCreate)
#define LLVMContextDispose (weft__llvm.LLVMContextDispose)
#define LLVMCreateBuilderInContext (weft__llvm.LLVMCreateBuilderInContext)
#define LLVMCreateEnumAttribute (weft__llvm.LLVMCreateEnumAttribute)
#define LLVMCreatePassBuilderOptions (weft__llvm.LLVMCreatePassBuilderOptions)
#define LLVMCreateTargetDataLayout (weft__llvm.LLVMCreateTargetDataLayout)
#define LLVMCreateTargetMachine (weft__llvm.LLVMCreateTargetMachine)
#define LLVMDisposeBuilder (weft__llvm.LLVMDisposeBuilder)
#define LLVMDisposeErrorMessage (weft__llvm.LLVMDisposeErrorMessage)
#define LLVMDisposeMemoryBuffer (weft__llvm.LLVMDisposeMemoryBuffer)
#define LLVMDisposeMessage (weft__llvm.LLVMDisposeMessage)
#define LLVMDisposeModule (weft__llvm.LLVMDisposeModule)
#define LLVMDisposePassBuilderOptions (weft__llvm.LLVMDisposePassBuilderOptions)
#define LLVMDisposeTargetData (weft__llvm.LLVMDisposeTargetData)
#define LLVMDisposeTargetMachine (weft__llvm.LLVMDisposeTargetMachine)
#define LLVMDoubleTypeInContext (weft__llvm.LLVMDoubleTypeInContext)
#define LLVMFloatTypeInContext (weft__llvm.LLVMFloatTypeInContext)
#define LLVMFunctionType (weft__llvm.LLVMFunctionType)
#define LLVMGetDefaultTargetTriple (weft__llvm.LLVMGetDefaultTargetTriple)
#define LLVMGetElementType (weft__llvm.LLVMGetElementType)
#define LLVMGetEntryBasicBlock (weft__llvm.LLVMGetEntryBasicBlock)
#define LLVMGetEnumAttributeKindForName (weft__llvm.LLVMGetEnumAttributeKindForName)
#define LLVMGetErrorMessage (weft__llvm.LLVMGetErrorMessage)
#define LLVMGetFirstInstruction (weft__llvm.LLVMGetFirstInstruction)
#define LLVMGetHostCPUFeatures (weft__llvm.LLVMGetHostCPUFeatures)
#define LLVMGetHostCPUName (weft__llvm.LLVMGetHostCPUName)
#define LLVMGetInsertBlock (weft__llvm.LLVMGetInsertBlock)
#define LLVMGetIntrinsicDeclaration (weft__llvm.LLVMGetIntrinsicDeclaration)
#define LLVMGetMDKindIDInContext (weft__llvm.LLVMGetMDKindIDInContext)
#define LLVMGetModuleContext (weft__llvm.LLVMGetModuleContext)
#define LLVMGetParam (weft__llvm.LLVMGetParam)
#define LLVMGetPoison (weft__llvm.LLVMGetPoison)
#define LLVMGetTargetFromTriple (weft__llvm.LLVMGetTargetFromTriple)
#define LLVMGetTypeKind (weft__llvm.LLVMGetTypeKind)
#define LLVMInt1TypeInContext (weft__llvm.LLVMInt1TypeInContext)
#define LLVMInt32TypeInContext (weft__llvm.LLVMInt32TypeInContext)
#define LLVMInt64TypeInContext (weft__llvm.LLVMInt64TypeInContext)
#define LLVMInt8TypeInContext (weft__llvm.LLVMInt8TypeInContext)
#define LLVMIntrinsicGetType (weft__llvm.LLVMIntrinsicGetType)
#define LLVMIsConstant (weft__llvm.LLVMIsConstant)
#define LLVMLookupIntrinsicID (weft__llvm.LLVMLookupIntrinsicID)
#define LLVMMDNodeInContext2 (weft__llvm.LLVMMDNodeInContext2)
#define LLVMMDStringInContext2 (weft__llvm.LLVMMDStringInContext2)
#define LLVMMetadataAsValue (weft__llvm.LLVMMetadataAsValue)
#define LLVMMetadataReplaceAllUsesWith (weft__llvm.LLVMMetadataReplaceAllUsesWith)
#define LLVMModuleCreateWithNameInContext (weft__llvm.LLVMModuleCreateWithNameInContext)
#define LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess (weft__llvm.LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess)
#define LLVMOrcCreateLLJIT (weft__llvm.LLVMOrcCreateLLJIT)
#define LLVMOrcCreateLLJITBuilder (weft__llvm.LLVMOrcCreateLLJITBuilder)
#define LLVMOrcDisposeLLJIT (weft__llvm.LLVMOrcDisposeLLJIT)
#define LLVMOrcExecutionSessionSetErrorReporter (weft__llvm.LLVMOrcExecutionSessionSetErrorReporter)
#define LLVMOrcJITDylibAddGenerator (weft__llvm.LLVMOrcJITDylibAddGenerator)
#define LLVMOrcJITDylibCreateResourceTracker (weft__llvm.LLVMOrcJITDylibCreateResourceTracker)
#define LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine (weft__llvm.LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine)
#define LLVMOrcLLJITAddObjectFileWithRT (weft__llvm.LLVMOrcLLJITAddObjectFileWithRT)
#define LLVMOrcLLJITBuilderSetJITTargetMachineBuilder (weft__llvm.LLVMOrcLLJITBuilderSetJITTargetMachineBuilder)
#define LLVMOrcLLJITGetExecutionSession (weft__llvm.LLVMOrcLLJITGetExecutionSession)
#define LLVMOrcLLJITGetGlobalPrefix (weft__llvm.LLVMOrcLLJITGetGlobalPrefix)
#define LLVMOrcLLJITGetMainJITDylib (weft__llvm.LLVMOrcLLJITGetMainJITDylib)
#define LLVMOrcLLJITLookup (weft__llvm.LLVMOrcLLJITLookup)
#define LLVMOrcReleaseResourceTracker (weft__llvm.LLVMOrcReleaseResourceTracker)
#define LLVMOrcResourceTrackerRemove (weft__llvm.LLVMOrcResourceTrackerRemove)
#define LLVMPassBuilderOptionsSetLoopUnrolling (weft__llvm.LLVMPassBuilderOptionsSetLoopUnrolling)
#define LLVMPassBuilderOptionsSetLoopVectorization (weft__llvm.LLVMPassBuilderOptionsSetLoopVectorization)
#define LLVMPassBuilderOptionsSetSLPVectorization (weft__llvm.LLVMPassBuilderOptionsSetSLPVectorization)
#define LLVMPointerTypeInContext (weft__llvm.LLVMPointerTypeInContext)
#define LLVMPositionBuilderAtEnd (weft__llvm.LLVMPositionBuilderAtEnd)
#define LLVMPositionBuilderBefore (weft__llvm.LLVMPositionBuilderBefore)
#define LLVMRunPasses (weft__llvm.LLVMRunPasses)
#define LLVMSetAlignment (weft__llvm.LLVMSetAlignment)
#define LLVMSetMetadata (weft__llvm.LLVMSetMetadata)
#define LLVMSetModuleDataLayout (weft__llvm.LLVMSetModuleDataLayout)
#define LLVMSetTarget (weft__llvm.LLVMSetTarget)
#define LLVMTargetMachineEmitToMemoryBuffer (weft__llvm.LLVMTargetMachineEmitToMemoryBuffer)
#define LLVMTemporaryMDNode (weft__llvm.LLVMTemporaryMDNode)
#define LLVMTypeOf (weft__llvm.LLVMTypeOf)
#define LLVMValueAsMetadata (weft__llvm.LLVMValueAsMetadata)
#define LLVMVectorType (weft__llvm.LLVMVectorType)
#define LLVMVerifyModule (weft__llvm.LLVMVerifyModule)
#define LLVMVoidTypeInContext (weft__llvm.LLVMVoidTypeInContext)
#endif

#endif
