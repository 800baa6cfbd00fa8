/* placeholder: the model formats land here */
typedef int dsb_model_placeholder;
