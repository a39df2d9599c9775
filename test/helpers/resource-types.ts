/**
 * The tests' names for the checked inputs and the state of the record resources, derived from each
 * provider object's methods (`create` takes the inputs, `read` the state), so no field is written twice.
 */
import type { authConfig } from "../../provider/resources/auth-config";
import type { authRole } from "../../provider/resources/auth-role";
import type { jobVersionTag } from "../../provider/resources/job-version-tag";

type InputsOfProvider<P extends { create(inputs: never): unknown }> = Parameters<P["create"]>[0];
type StateOfProvider<P extends { read(id: string, props: never): unknown }> = Parameters<P["read"]>[1];

/** The inputs of an AuthConfig after `check` (`clientSecret` arrives as plaintext: the engine unwraps secrets). */
export type AuthConfigInputs = InputsOfProvider<typeof authConfig>;
/** The state of an AuthConfig: its inputs but the secret, whose salted hash is kept instead. */
export type AuthConfigOutputs = StateOfProvider<typeof authConfig>;
/** The inputs of an AuthRole after `check`. */
export type AuthRoleInputs = InputsOfProvider<typeof authRole>;
/** The state of an AuthRole. */
export type AuthRoleOutputs = StateOfProvider<typeof authRole>;
/** The inputs of a JobVersionTag after `check`. */
export type JobVersionTagInputs = InputsOfProvider<typeof jobVersionTag>;
/** The state of a JobVersionTag. */
export type JobVersionTagOutputs = StateOfProvider<typeof jobVersionTag>;
